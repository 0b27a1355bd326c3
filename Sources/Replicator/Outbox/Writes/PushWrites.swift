import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Mobile push registration, as the Chat SDK's `registerPushChannels` and
/// `unregisterPushChannels` (`docs/conversations.md`, "Push").
public struct PushWrites<Custom: ChatCustomData>: OutboxWriter {
    /// The outbox the ops are queued in.
    public let outbox: Outbox<Custom>

    /// Registers `device` for the pushes of `channels` (offline like any write; sent in order
    /// with the device's other changes). Messages carry push keys when ``OutboxOptions/push`` is set.
    ///
    /// ```swift
    /// let device = try PushDevice.apns2(deviceToken: token, topic: "com.example.chat", environment: .production)
    /// try await outbox.push.registerPush(device, channels: ["general", chat.channelId])
    /// ```
    @discardableResult
    public func registerPush(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await queuePush(device, change: .add(channels))
    }

    /// Stops the pushes of `channels` to `device`.
    @discardableResult
    public func unregisterPush(_ device: PushDevice, channels: [String]) async throws -> OutboxReceipt<PushRegistration> {
        try await queuePush(device, change: .remove(channels))
    }

    /// Removes `device` from every channel's pushes (the user signed out, the token changed).
    @discardableResult
    public func removePushDevice(_ device: PushDevice) async throws -> OutboxReceipt<PushRegistration> {
        try await queuePush(device, change: .removeDevice)
    }

    private func queuePush(_ device: PushDevice, change: PushRegistration.Change) async throws -> OutboxReceipt<PushRegistration> {
        let registration: PushRegistration
        switch device.type {
        case .fcm:
            registration = PushRegistration(token: device.token, service: "fcm", change: change)
        case .apns2(let topic, let environment):
            registration = PushRegistration(
                token: device.token, service: "apns2", topic: topic, environment: environment.rawValue, change: change)
        }
        let opId = Outbox<Custom>.newOpId(), now = clock.now
        return try await commit { try $0.enqueue.push(opId: opId, registration, now: now) }
    }
}
