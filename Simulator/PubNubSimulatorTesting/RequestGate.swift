import PubNubWire

/// Holds the requests a test picks (publishes, say) until the test opens the gate: a send stays
/// "in flight" for as long as the test needs, to suspend, stop or kill the app in the middle of it.
///
/// Put it in an ``InProcessTransport``'s ``InProcessTransport/onRequest(_:)`` hook. A held request
/// goes on to the server when the gate opens, or when its own task is cancelled: then the server
/// has it and only its answer is lost, the case a replica must not turn into a second send.
///
/// ```swift
/// let gate = RequestGate { $0.pathSegments.first == "publish" }
/// transport.onRequest { await gate.pass($0) }
/// _ = try await replica.send(text: "in flight", to: "general")
/// await gate.waitUntilHolding()        // the publish left and waits for its answer
/// await replica.suspend()
/// await gate.open()
/// ```
public actor RequestGate {
    private let matches: @Sendable (WireRequest) -> Bool
    private var isOpen = false
    /// Parked tasks by ticket: held requests, and tests waiting for the first one.
    private var parked: [Int: (kind: Parked, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var counter = 0

    private enum Parked { case request, waiter }

    /// A closed gate that holds every request for which `matches` is true.
    public init(holding matches: @escaping @Sendable (WireRequest) -> Bool) {
        self.matches = matches
    }

    /// How many requests have been held so far (released ones included).
    public private(set) var heldCount = 0

    /// Returns at once for a request the gate does not hold, or once the gate is open; else waits
    /// until ``open()`` or until the calling task is cancelled.
    public func pass(_ request: WireRequest) async {
        guard !isOpen, matches(request) else { return }
        heldCount += 1
        resume { $0 == .waiter }
        await park(.request)
    }

    /// Waits until the gate holds (or has held) a request, or the calling task is cancelled.
    public func waitUntilHolding() async {
        guard heldCount == 0 else { return }
        await park(.waiter)
    }

    /// Lets every held request go on, and every later one pass.
    public func open() {
        isOpen = true
        resume { $0 == .request }
    }

    /// Parks the calling task until it is resumed or cancelled.
    private func park(_ kind: Parked) async {
        counter += 1
        let ticket = counter
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                guard !Task.isCancelled else { return continuation.resume() }
                parked[ticket] = (kind, continuation)
            }
        } onCancel: {
            Task { await self.release(ticket) }
        }
    }

    private func resume(where kind: (Parked) -> Bool) {
        let due = parked.filter { kind($0.value.kind) }
        for (ticket, entry) in due {
            parked[ticket] = nil
            entry.continuation.resume()
        }
    }

    private func release(_ ticket: Int) {
        parked.removeValue(forKey: ticket)?.continuation.resume()
    }
}
