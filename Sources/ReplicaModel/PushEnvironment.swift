import Foundation

/// The APNs environment a device token was issued for: a debug build's token works only with
/// Apple's development (sandbox) servers, an App Store or TestFlight build's only with production.
///
/// Declared once for the two places that name it: a device's registration on the wire
/// (`PushType.apns2(topic:environment:)` in `PubNubWire`, sent as `environment=development`) and
/// the APNs target inside a message's push keys (``ChatPushConfiguration/apnsEnvironment``,
/// written as `"environment":"development"`). PubNub keeps registrations of the two environments
/// apart: removing a device from one leaves its registration in the other.
public enum PushEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    /// Apple's sandbox servers (`development`): builds run from Xcode. The default of every
    /// PubNub SDK.
    case development
    /// Apple's production servers (`production`): App Store, TestFlight and ad hoc builds.
    case production
}
