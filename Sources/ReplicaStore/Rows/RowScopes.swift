import Foundation

/// The object tables a full listing can prune.
public enum ObjectTable: String, Sendable {
    /// `users`.
    case users
    /// `channels`.
    case channels
}

/// Which memberships a listing covers.
public enum MembershipSide: Sendable, Hashable {
    /// The channels of a user (`GET /uuids/{id}/channels`).
    case user(String)
    /// The members of a channel (`GET /channels/{id}/uuids`).
    case channel(String)
}
