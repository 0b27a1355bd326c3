import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Mobile push: which channels' pushes reach this device.
///
/// ```swift
/// let device = try PushDevice.apns2(deviceToken: token, topic: Bundle.main.bundleIdentifier!)
/// try await replica.push.register(device, channels: memberships.map(\.channelId))
/// ```
///
/// Reached through ``Replica/push``: a value made per access, holding only the replica.
public struct ReplicaPush<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Registers this device for the pushes of `channels` (`registerPushChannels`); messages carry
    /// push keys when `ReplicaConfiguration.outbox.push` is set.
    ///
    /// ```swift
    /// let device = try PushDevice.apns2(deviceToken: token, topic: Bundle.main.bundleIdentifier!)
    /// try await replica.registerPush(device, channels: memberships.map(\.channelId))
    /// ```
    @discardableResult
    public func register(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await replica.write { try await $0.push.registerPush(device, channels: channels) }
    }

    /// Stops the pushes of `channels` to `device`.
    @discardableResult
    public func unregister(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await replica.write { try await $0.push.unregisterPush(device, channels: channels) }
    }

    /// Removes `device` from every channel's pushes (sign-out).
    @discardableResult
    public func removeDevice(_ device: PushDevice) async throws -> OutboxReceipt<PushRegistration> {
        try await replica.write { try await $0.push.removePushDevice(device) }
    }

    /// The channels PubNub sends pushes of to `device` now, read from the server (the Chat SDK's
    /// `getPushChannels`): to check what ``register(_:channels:)`` left registered.
    ///
    /// ```swift
    /// let channels = try await replica.pushChannels(of: device)
    /// ```
    public func channels(of device: PushDevice) async throws -> [String] {
        try await replica.client.push.channels(device: device)
    }
}

extension Replica {
    /// Mobile push: which channels' pushes reach this device.
    public nonisolated var push: ReplicaPush<Custom> { ReplicaPush(replica: self) }
}
