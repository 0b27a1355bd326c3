import Foundation
import ReplicaModel

/// A device's mobile push registration change: channels added or removed, or the device removed
/// from every channel. The device is a token with its service: `fcm`, or `apns2` with the app's
/// topic (bundle id) and environment.
public struct PushRegistration: Sendable, Hashable, Codable {
    /// What changes.
    public enum Change: Sendable, Hashable, Codable {
        /// The device gets pushes of these channels too.
        case add([String])
        /// The device no longer gets pushes of these channels.
        case remove([String])
        /// The device gets no pushes at all.
        case removeDevice
    }

    /// The device token (FCM registration token, or the APNs token in hex).
    public var token: String
    /// `fcm` or `apns2`.
    public var service: String
    /// The APNs topic (the app's bundle id); nil for FCM.
    public var topic: String?
    /// The APNs environment (`development`, `production`); nil for FCM.
    public var environment: String?
    /// What changes.
    public var change: Change

    /// A registration change.
    public init(token: String, service: String, topic: String? = nil, environment: String? = nil, change: Change) {
        self.token = token
        self.service = service
        self.topic = topic
        self.environment = environment
        self.change = change
    }
}
