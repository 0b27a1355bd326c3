import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate push`: register a device for mobile push, remove it, list its channels, as the
/// Chat SDK's `registerPushChannels`, `unregisterPushChannels` and `getPushChannels`.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Register a device for mobile push (APNs2, FCM), remove it, or list its channels.",
        discussion: "add and remove work offline (`sync` sends them); list asks PubNub.",
        subcommands: [Add.self, Remove.self, List.self])

    /// The device flags every subcommand takes.
    struct DeviceOptions: ParsableArguments {
        @Option(name: .long, help: "The device token (FCM registration token, or the APNs token in hex).") var deviceToken: String
        @Option(name: .long, help: "apns2 or fcm.") var type: String
        @Option(name: .long, help: "The APNs topic: the app's bundle id (apns2 only).") var topic: String?
        @Option(name: .long, help: "development (default) or production (apns2 only).") var environment: String?

        func device() throws -> PushDevice {
            switch type {
            case "fcm":
                guard topic == nil, environment == nil else { throw ValidationError("--topic and --environment apply to --type apns2") }
                return try PushDevice(token: deviceToken, type: .fcm)
            case "apns2":
                guard let topic else { throw ValidationError("--type apns2 needs --topic (the app's bundle id)") }
                let environment = try self.environment.map { text in
                    guard let value = PushEnvironment(rawValue: text) else {
                        throw ValidationError("--environment: \(text) is neither development nor production")
                    }
                    return value
                } ?? .development
                return try PushDevice(token: deviceToken, type: .apns2(topic: topic, environment: environment))
            default:
                throw ValidationError("--type: \(type) is neither apns2 nor fcm")
            }
        }
    }

    struct Add: ReportingCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Send the pushes of channels to a device (works offline).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var device: DeviceOptions
        @Option(name: .long, help: "A channel (repeat the flag for more).") var channel: [String] = []

        func perform() async throws {
            guard !channel.isEmpty else { throw ValidationError("give at least one --channel") }
            try validateIdentifiers(channel, flag: "--channel")
            try await Session.enqueue(options) { try await $0.push.register(try device.device(), channels: channel) }
        }
    }

    struct Remove: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Stop the pushes of channels to a device; without --channel, of every channel (works offline).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var device: DeviceOptions
        @Option(name: .long, help: "A channel (repeat the flag for more); none removes the device.") var channel: [String] = []

        func perform() async throws {
            try validateIdentifiers(channel, flag: "--channel")
            try await Session.enqueue(options) { replica in
                let device = try device.device()
                return channel.isEmpty
                    ? try await replica.push.removeDevice(device) : try await replica.push.unregister(device, channels: channel)
            }
        }
    }

    struct List: ReportingCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The channels PubNub sends to a device (asks PubNub).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var device: DeviceOptions

        func perform() async throws {
            let replica = try await Session(options).replica
            let channels = try await replica.push.channels(of: try device.device())
            if options.json { return try Output.json(channels) }
            Output.standardOutput(channels.isEmpty ? "no channels send pushes to this device\n" : channels.map { Output.terminalSafe($0) + "\n" }.joined())
        }
    }
}
