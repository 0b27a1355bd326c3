import Foundation
import Logging
import PubNubWire
import ReplicaModel

/// The Chat SDK's typing signal: `{"type":"typing","value":true}` (30 bytes) or `false`, sent as
/// a signal on the channel itself. The one place that knows the payload.
public enum TypingSignal {
    /// The payload of a typing signal.
    public static func payload(isTyping: Bool) -> JSONValue { ["type": "typing", "value": .bool(isTyping)] }

    /// Whether `payload` is a typing signal, and which: nil for any other signal.
    public static func isTyping(_ payload: JSONValue) -> Bool? {
        guard let object = payload.objectValue, object["type"] == .string("typing"), case .bool(let value)? = object["value"]
        else { return nil }
        return value
    }
}

/// Why a typing call was refused.
public enum TypingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The Chat SDK allows no typing indicator on a `public` channel (anyone may be there).
    case publicChannel(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .publicChannel(let channel): "typing indicators are not sent on the public channel \(channel)"
        }
    }
}

/// Who is typing, as the PubNub Chat SDK does it: signals, never the outbox, never the store file.
///
/// Sending: ``startTyping(in:)`` signals `true` at most once per ``timeout`` minus 0.5 s;
/// ``stopTyping(in:)`` signals `false` only when a `true` went out within the timeout. Receiving:
/// a user is typing from their `true` until their `false`, or until ``timeout`` plus 10 ms pass
/// without another `true`. A ``LiveSync`` feeds the signals it receives here (``LiveSync/typing``).
///
/// ```swift
/// let typing = live.typing
/// try await typing.startTyping(in: "general")           // on each keystroke; throttled
/// for await ids in typing.typers(in: "general") {        // ["bob"], then [] after 5 s of silence
///     inputBar.typingMemberIds = ids
/// }
/// ```
///
/// A signal is at-most-once: a lost `false` is healed by the timeout, a lost `true` by the next
/// keystroke. Sending failures are thrown (``PubNubWire/WireError``) and never retried.
public actor TypingIndicators {
    /// How long a `true` counts (seconds): the Chat SDK's `typingTimeout`, default 5, at least 1.
    public nonisolated let timeout: TimeInterval
    /// The current user (their own signals are left out of ``typers(in:includingCurrentUser:)`` by default).
    public nonisolated let userId: String
    let client: PubNubClient
    let clock: any ReplicaClock
    let channelType: @Sendable (String) async -> String?
    let logger: Logger

    /// When this device last signalled `true`, per channel.
    private var sentTrue: [String: Date] = [:]
    /// Who is typing, per channel, until when.
    private var typing: [String: [String: Date]] = [:]
    private var observers: [String: [UInt64: (includeSelf: Bool, continuation: AsyncStream<[String]>.Continuation)]] = [:]
    private var observerCounter: UInt64 = 0
    private var expiryTask: Task<Void, Never>?
    private var expiryAt: Date?

    /// Typing indicators for `client`'s user. `channelType` tells a channel's type (`public`
    /// refuses typing); ``LiveSync`` reads it from the store.
    public init(
        client: PubNubClient, timeout: TimeInterval = 5, clock: any ReplicaClock = SystemClock(),
        channelType: @escaping @Sendable (String) async -> String? = { _ in nil },
        logger: Logger = Logger(label: "pnreplicate.typing")
    ) {
        self.client = client
        self.userId = client.configuration.userId
        self.timeout = timeout.isFinite ? max(1, timeout) : 5
        self.clock = clock
        self.channelType = channelType
        self.logger = logger
    }

    // MARK: Sending

    /// Says the current user is typing in `channel`. Call it on every keystroke: a signal goes
    /// out only when none did in the last ``timeout`` − 0.5 s. Returns whether one was sent.
    @discardableResult
    public func startTyping(in channel: String) async throws -> Bool {
        if await channelType(channel) == "public" { throw TypingError.publicChannel(channel) }
        let now = clock.now
        if let last = sentTrue[channel], now.timeIntervalSince(last) < timeout - 0.5 { return false }
        sentTrue[channel] = now
        do {
            _ = try await client.signal(SignalRequest(channel: channel, message: TypingSignal.payload(isTyping: true)))
        } catch {
            if sentTrue[channel] == now { sentTrue[channel] = nil }
            throw error
        }
        return true
    }

    /// Says the current user stopped typing in `channel` (message sent, field cleared). Sends
    /// `false` only when a `true` went out within the timeout (otherwise the others have already
    /// dropped the user), or always with `force` (a `true` another process sent, say). Returns
    /// whether one was sent.
    @discardableResult
    public func stopTyping(in channel: String, force: Bool = false) async throws -> Bool {
        if await channelType(channel) == "public" { throw TypingError.publicChannel(channel) }
        let last = sentTrue.removeValue(forKey: channel)
        guard force || last.map({ clock.now.timeIntervalSince($0) < timeout }) == true else { return false }
        _ = try await client.signal(SignalRequest(channel: channel, message: TypingSignal.payload(isTyping: false)))
        return true
    }

    // MARK: Receiving

    /// The ids typing in `channel` now (sorted), without the current user unless asked.
    public func typers(inChannel channel: String, includingCurrentUser: Bool = false) -> [String] {
        let now = clock.now
        return (typing[channel] ?? [:]).filter { $0.value > now && (includingCurrentUser || $0.key != userId) }.keys.sorted()
    }

    /// The ids typing in `channel` (sorted), now and after each change: one element per change
    /// (a `true` from someone new, a `false`, an expiry). The sequence lives until the task
    /// reading it is cancelled.
    public nonisolated func typers(in channel: String, includingCurrentUser: Bool = false) -> AsyncStream<[String]> {
        let (stream, continuation) = AsyncStream<[String]>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let task = Task { await self.addObserver(channel: channel, includeSelf: includingCurrentUser, continuation) }
        continuation.onTermination = { _ in
            Task {
                let id = await task.value
                await self.removeObserver(channel: channel, id: id)
            }
        }
        return stream
    }

    private func addObserver(channel: String, includeSelf: Bool, _ continuation: AsyncStream<[String]>.Continuation) -> UInt64 {
        observerCounter += 1
        observers[channel, default: [:]][observerCounter] = (includeSelf, continuation)
        continuation.yield(typers(inChannel: channel, includingCurrentUser: includeSelf))
        return observerCounter
    }

    private func removeObserver(channel: String, id: UInt64) {
        observers[channel]?[id] = nil
        if observers[channel]?.isEmpty == true { observers[channel] = nil }
    }

    /// A signal from `userId` on `channel`: a typing signal changes who is typing; any other is
    /// ignored. ``LiveSync`` calls this for every signal it receives.
    public func receive(channel: String, userId: String, payload: JSONValue) {
        guard let isTyping = TypingSignal.isTyping(payload), !userId.isEmpty else { return }
        let before = Set((typing[channel] ?? [:]).keys)
        if isTyping {
            typing[channel, default: [:]][userId] = clock.now.addingTimeInterval(timeout + 0.010)
        } else {
            typing[channel]?[userId] = nil
        }
        let after = Set((typing[channel] ?? [:]).keys)
        if before != after { publish(channel) }
        scheduleExpiry()
    }

    /// Tells the observers of `channel` who is typing.
    private func publish(_ channel: String) {
        for observer in (observers[channel] ?? [:]).values {
            observer.continuation.yield(typers(inChannel: channel, includingCurrentUser: observer.includeSelf))
        }
    }

    /// Drops the typers whose time is up and tells their channels' observers.
    private func expire() {
        let now = clock.now
        for channel in typing.keys.sorted() {
            guard let users = typing[channel] else { continue }
            let live = users.filter { $0.value > now }
            if live.count != users.count {
                typing[channel] = live.isEmpty ? nil : live
                publish(channel)
            }
        }
        expiryAt = nil
        scheduleExpiry()
    }

    /// One timer, on the injected clock, for the earliest expiry.
    private func scheduleExpiry() {
        guard let next = typing.values.flatMap(\.values).min() else {
            expiryTask?.cancel()
            expiryTask = nil
            expiryAt = nil
            return
        }
        if let at = expiryAt, at <= next, expiryTask != nil { return }
        expiryTask?.cancel()
        expiryAt = next
        let clock = clock
        expiryTask = Task { [weak self] in
            do {
                try await clock.sleep(until: next)
            } catch {
                return
            }
            await self?.expire()
        }
    }

    deinit { expiryTask?.cancel() }
}
