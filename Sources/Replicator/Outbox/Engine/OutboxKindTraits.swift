import Foundation
import ReplicaModel
import ReplicaStore

/// What an op kind is, whatever the op's data: the one exhaustive switch that says, for each
/// kind, how its request goes, what it waits for or looks up first, what it changes locally, which
/// answers mean it is done and what it conflicts as. Where an op is filed (lane and target) needs
/// its data: ``OutboxKeys/filing(of:opId:)``.
///
/// A new kind gets its row here first; the compiler then lists every other switch it must join
/// (none has a `default:`; `.ci/ownership` refuses one).
struct OutboxKindTraits: Sendable, Hashable {
    /// How the op's request reaches PubNub.
    enum Route: Sendable, Hashable {
        /// A publish (its answer is the message's timetoken).
        case publish
        /// A signal (never stored; its answer is a timetoken).
        case signal
        /// A message action added (its answer is the action's timetoken).
        case addAction
        /// A message action removed.
        case removeAction
        /// A user, channel or membership write, sent and answered by the object backend.
        case objectWrite
        /// A range deleted from a channel's history.
        case deleteHistory
        /// A device's push registration (`/v1/push`, `/v2/push`).
        case push
        /// A record of the app's own DataSync classes (`/v1/datasync` entities and
        /// relationships, whatever the object backend: ``DataSyncAppRecordWrites``).
        case appRecord
    }

    /// What the drain looks up before the request can be built (nothing: it can go as it is).
    enum Preparation: Sendable, Hashable {
        /// Nothing (a send with files uploads them first: that depends on the op, not the kind).
        case nothing
        /// The message's timetoken, when the op was queued before its message was published.
        case messageTimetoken
        /// The message's timetoken and the action's own (a removal names the action).
        case actionTimetoken
        /// The membership's server version, when the op has a base or is retried over the server's.
        case membershipBase
        /// The object's server eTag, when the op is retried over the server's or creates only.
        case objectBase
        /// The server's state it is written over or decided by (a mute list, the memberships of a
        /// batch of read positions, an invitee's membership).
        case serverState
    }

    /// What the op changes in the store when it is queued (and reverts when it is discarded).
    enum LocalChange: Sendable, Hashable {
        /// A message (stored as pending; a hard delete removes it).
        case message
        /// The current user's message action.
        case action
        /// A user, a channel, a membership or an app record.
        case object(ConflictEntity)
        /// The current user's mute list as shown.
        case muteList
        /// The read positions of many memberships.
        case readPositions
        /// Nothing (events, signals, reports, push registrations).
        case nothing
    }

    /// An error answer that proves the op's effect is in place although the request failed.
    enum DoneAnswer: Sendable, Hashable {
        /// 409: the action exists (a resent add whose first answer was lost).
        case conflict409
        /// 400 "no matching": the action is gone already.
        case noMatching400
        /// 404: the object is gone already (a resent removal, or another writer's).
        case notFound404
    }

    /// How the request goes.
    var route: Route
    /// Whether its payload is a message a crypto module encrypts (the Chat SDK's publishes are;
    /// never actions, objects or signals).
    var encryptsPayload: Bool
    /// Whether its request names its message by timetoken, so it waits until the message has one.
    var needsMessageTimetoken: Bool
    /// What the drain looks up first.
    var preparation: Preparation
    /// What it changes locally.
    var localChange: LocalChange
    /// Whether it deletes its object (a user, a channel or a membership).
    var isRemoval: Bool
    /// For a removal: the kind of the set it replaces when that set is unsent.
    var replacesSet: OutboxKind?
    /// The error answer that means done, if any.
    var doneAnswer: DoneAnswer?

    /// The entity whose conflicts the op records, if its edits can conflict.
    var conflictEntity: ConflictEntity? {
        if case .object(let entity) = localChange { entity } else { nil }
    }
}

extension OutboxKind {
    /// This kind's traits.
    var traits: OutboxKindTraits {
        switch self {
        case .send:
            OutboxKindTraits(
                route: .publish, encryptsPayload: true, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .message, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .addReaction:
            OutboxKindTraits(
                route: .addAction, encryptsPayload: false, needsMessageTimetoken: true, preparation: .messageTimetoken,
                localChange: .action, isRemoval: false, replacesSet: nil, doneAnswer: .conflict409)
        case .removeReaction:
            OutboxKindTraits(
                route: .removeAction, encryptsPayload: false, needsMessageTimetoken: true, preparation: .actionTimetoken,
                localChange: .action, isRemoval: false, replacesSet: nil, doneAnswer: .noMatching400)
        case .setMembership:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .membershipBase,
                localChange: .object(.membership), isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .removeMembership:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .membershipBase,
                localChange: .object(.membership), isRemoval: true, replacesSet: .setMembership, doneAnswer: .notFound404)
        case .setUser:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .objectBase,
                localChange: .object(.user), isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .removeUser:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .object(.user), isRemoval: true, replacesSet: .setUser, doneAnswer: .notFound404)
        case .setChannel:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .objectBase,
                localChange: .object(.channel), isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .removeChannel:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .object(.channel), isRemoval: true, replacesSet: .setChannel, doneAnswer: .notFound404)
        case .mention:
            OutboxKindTraits(
                route: .publish, encryptsPayload: true, needsMessageTimetoken: true, preparation: .messageTimetoken,
                localChange: .nothing, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .receipt:
            OutboxKindTraits(
                route: .signal, encryptsPayload: false, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .nothing, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .hardDelete:
            OutboxKindTraits(
                route: .deleteHistory, encryptsPayload: false, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .message, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .report:
            OutboxKindTraits(
                route: .publish, encryptsPayload: true, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .nothing, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .setMuteList:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .serverState,
                localChange: .muteList, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .invite:
            OutboxKindTraits(
                route: .publish, encryptsPayload: true, needsMessageTimetoken: false, preparation: .serverState,
                localChange: .nothing, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .push:
            OutboxKindTraits(
                route: .push, encryptsPayload: false, needsMessageTimetoken: false, preparation: .nothing,
                localChange: .nothing, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .readPositions:
            OutboxKindTraits(
                route: .objectWrite, encryptsPayload: false, needsMessageTimetoken: false, preparation: .serverState,
                localChange: .readPositions, isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .setAppRecord:
            OutboxKindTraits(
                route: .appRecord, encryptsPayload: false, needsMessageTimetoken: false, preparation: .objectBase,
                localChange: .object(.record), isRemoval: false, replacesSet: nil, doneAnswer: nil)
        case .removeAppRecord:
            OutboxKindTraits(
                route: .appRecord, encryptsPayload: false, needsMessageTimetoken: false, preparation: .objectBase,
                localChange: .object(.record), isRemoval: true, replacesSet: .setAppRecord, doneAnswer: .notFound404)
        }
    }
}
