import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate presence`: who PubNub says is on a channel (here-now, with state), next to the
/// presence the store holds for the channel's members.
struct PresenceCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence",
        abstract: "Show who is on a channel: PubNub's here-now next to the presence the store holds.",
        discussion: """
            One line per user: USER, SERVER (here or -), STORE (present, absent, or unknown \
            before any presence was read; `no member row` for a user PubNub lists who is not a \
            stored member) and the presence state as JSON. The store is only read; `listen \
            --presence` keeps it current. --json prints {channel, occupancy, server, store}.
            """)

    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String

    func validate() throws { try validateIdentifiers([channel], flag: "--channel") }

    func perform() async throws {
        // The store is only read (opened, and refused, before anything is asked of PubNub); a
        // replica of no store asks PubNub.
        let store = try options.openForReading()
        let replica = try await Session.network(options)
        let occupancy = try await replica.live.hereNow(channel: channel)
        let members = try await store.fetch(store.queries.members(ofChannel: channel, presentFirst: true))
        let output = PresenceOutput(
            channel: channel, occupancy: occupancy.occupancy, server: occupancy.occupants,
            store: members.map { PresenceOutput.Stored(userId: $0.userId, isPresent: $0.isPresent, state: $0.presenceState) })
        if options.json { return try Output.json(output) }
        Output.standardOutput(output.text())
    }
}

/// What `presence --json` prints.
struct PresenceOutput: Encodable {
    /// A member as the store holds it.
    struct Stored: Encodable {
        var userId: String
        /// nil: no presence read yet.
        var isPresent: Bool?
        var state: JSONValue?
    }

    var channel: String
    var occupancy: Int
    var server: [PresentUser]
    var store: [Stored]

    /// The table: `USER SERVER STORE STATE`, the store's members first, then users only PubNub lists.
    func text() -> String {
        let here = Dictionary(server.map { ($0.userId, $0) }, uniquingKeysWith: { first, _ in first })
        var rows: [[String]] = [["USER", "SERVER", "STORE", "STATE"]]
        for member in store {
            let stored = member.isPresent.map { $0 ? "present" : "absent" } ?? "unknown"
            let state = (member.state ?? here[member.userId]?.state).flatMap { try? $0.jsonString() } ?? ""
            rows.append([member.userId, here[member.userId] == nil ? "-" : "here", stored, state])
        }
        let stored = Set(store.map(\.userId))
        for user in server where !stored.contains(user.userId) {
            rows.append([user.userId, "here", "no member row", user.state.flatMap { try? $0.jsonString() } ?? ""])
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            row.enumerated().map { $0.offset == 3 ? $0.element : $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return Output.terminalSafe("\(channel): \(occupancy) here\n" + lines.joined(separator: "\n") + "\n")
    }
}
