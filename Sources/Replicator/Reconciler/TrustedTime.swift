import Foundation
import PubNubWire
import ReplicaModel

/// Which server times this device believes: the one owner of the cursor trust rule.
///
/// A subscribe cursor is whatever the server (or a man in the middle, or a broken proxy) says the
/// time is. A checkpoint that took it would claim that the store holds everything up to it, and a
/// cursor ahead of real time would then hide every message published before real time catches up:
/// no pull would ever ask for them. So a checkpoint never claims a time the device has not
/// verified. Trusted are:
///
/// - a `/time` answer that agrees with the device clock within ``ReconcilerOptions/clockTolerance``
///   (the earlier of the two is taken): at most one per sync and one per reconnect;
/// - the timetokens of messages actually stored (the server gave each to a message it accepted).
///
/// A cursor moves a checkpoint at most to the newest of these (``clamp(_:)``), and a cursor further
/// ahead of the verified time than the device clock has moved since (plus the tolerance) is a lie:
/// ``isPlausible(cursor:now:)`` says no, and the live sync starts again from a handshake.
/// See docs/reliability.md, "Which times a checkpoint trusts".
struct TrustedTime: Sendable {
    /// The newest `/time` answer accepted, and the device time when it was.
    private(set) var verified: (time: Timetoken, at: Date)?
    /// The newest timetoken of a message stored in this process.
    private(set) var newestMessage: Timetoken?
    /// How far `/time` and the device clock may disagree (seconds).
    let tolerance: TimeInterval

    init(tolerance: TimeInterval) {
        self.tolerance = tolerance
    }

    /// The newest time a checkpoint may claim: the verified `/time` or the newest stored message,
    /// whichever is later; nil when neither is known.
    var ceiling: Timetoken? {
        switch (verified?.time, newestMessage) {
        case (let time?, let message?): max(time, message)
        case (let time?, nil): time
        case (nil, let message?): message
        case (nil, nil): nil
        }
    }

    /// Takes a `/time` answer received at device time `now` when the two agree within the
    /// tolerance (the earlier of them is kept); returns whether it was taken.
    @discardableResult
    mutating func accept(serverTime: Timetoken, now: Date) -> Bool {
        guard abs(serverTime.date.timeIntervalSince(now)) <= tolerance else { return false }
        let device = (try? Timetoken(date: now)) ?? serverTime
        let time = min(serverTime, device)
        if let verified, verified.time >= time { return true }
        verified = (time, now)
        return true
    }

    /// A message with this timetoken was stored.
    mutating func stored(message timetoken: Timetoken) {
        newestMessage = max(newestMessage ?? timetoken, timetoken)
    }

    /// Where a checkpoint may move given a cursor: the cursor, but never past ``ceiling``; nil
    /// when nothing is trusted yet (the checkpoint stays where it is).
    func clamp(_ cursor: Timetoken) -> Timetoken? {
        ceiling.map { min(cursor, $0) }
    }

    /// Whether a cursor received at device time `now` can be the server's present or past: no
    /// further ahead of the verified time than the device clock moved since, plus the tolerance.
    /// Without a verified time, a cursor up to a day ahead of the device clock passes (a device
    /// clock can be wrong by hours; the checkpoints are clamped either way).
    func isPlausible(cursor: Timetoken, now: Date) -> Bool {
        guard let verified else { return cursor.date.timeIntervalSince(now) < 86_400 }
        let elapsed = max(0, now.timeIntervalSince(verified.at))
        return cursor.date.timeIntervalSince(verified.time.date) <= elapsed + tolerance
    }
}
