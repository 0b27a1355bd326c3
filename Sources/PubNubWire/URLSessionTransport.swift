import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` on URLSession: portable to Apple platforms (FoundationNetworking on Linux).
///
/// Each request is bounded as a whole: the timeout counts connecting, sending and reading the
/// entire body, not idle gaps (URLSession's own `timeoutIntervalForRequest` is an idle timeout, and
/// FoundationNetworking on Linux resets it on every byte). A real timer races the request and, when
/// it wins, the caller gets ``TransportFailure/outcomeUnknown(reason:)`` ("deadline of N s
/// exceeded") at once, whether or not the URLSession task honours its cancellation. The body is
/// capped (`TransportLimits.defaultMaximumResponseBytes` unless configured), a cancelled caller
/// gets control back immediately, and redirects are never followed: the 3xx response itself is
/// returned.
///
/// URLSession does not say whether a request head was written, so once a task has started, a
/// deadline or a cancellation is always ``TransportFailure/outcomeUnknown(reason:)`` (the outbox
/// probes before sending again); only a failure before the task starts is
/// ``TransportFailure/notSent(reason:)``.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let exchanges: ExchangeTable
    private let timeout: Duration
    private let maximumResponseBytes: Int

    /// A transport with its own ephemeral session.
    ///
    /// - Parameters:
    ///   - timeout: seconds the whole request may take, from the start of connecting to the last
    ///     byte of the body; clamped into `TransportLimits.timeoutRange`.
    ///   - maximumResponseBytes: the largest response body accepted; a larger one fails the request.
    public init(timeout: TimeInterval = 15, maximumResponseBytes: Int = TransportLimits.defaultMaximumResponseBytes) {
        self.timeout = TransportLimits.clamp(seconds: timeout)
        self.maximumResponseBytes = max(0, maximumResponseBytes)
        let configuration = URLSessionConfiguration.ephemeral
        // The deadline below is authoritative; URLSession's own timeouts sit at least a second behind it as
        // a backstop (whole seconds: FoundationNetworking truncates them to Int).
        let backstop = (Double(self.timeout.components.seconds) + 2).rounded(.up)
        configuration.timeoutIntervalForRequest = backstop
        // Each request sets its own idle backstop below (a long poll's is longer than the default).
        configuration.timeoutIntervalForResource = 86_400
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // No cache at all, not just an ignored one: with one, FoundationNetworking on Linux looks a
        // task's cached response up on another queue, and a cancel landing meanwhile reports the
        // task failed after it left the session's registry, a fatal error ("Trying to access a
        // behaviour for a task that in not in the registry"; `listen` stopped mid-request hit it).
        configuration.urlCache = nil
        exchanges = ExchangeTable()
        session = URLSession(configuration: configuration, delegate: exchanges, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends the request within the deadline and collects the whole response (a 3xx included);
    /// connection-level failures, the deadline, the body cap and cancellation map to
    /// ``TransportFailure``.
    public func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        guard let url = URL(string: origin.url(for: request)) else {
            throw .notSent(reason: "cannot build a URL for \(request.operation)")
        }
        guard !Task.isCancelled else { throw .notSent(reason: "cancelled before sending") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let timeout = request.timeout.map(TransportLimits.clamp) ?? self.timeout
        urlRequest.timeoutInterval = (Double(timeout.components.seconds) + 2).rounded(.up)

        let task = session.dataTask(with: urlRequest)
        let exchange = Exchange(maximumBytes: maximumResponseBytes)
        exchanges.register(exchange, for: task)
        defer { exchanges.remove(task) }
        // A Dispatch timer, not a sleeping task: the deadline must fire even when every thread of
        // Swift's cooperative pool is busy (an app blocking them, or a loaded two-core machine).
        let deadline = DispatchWorkItem {
            exchange.abort(reason: TransportLimits.deadlineExceeded(timeout))
            task.cancel()
        }
        let nanoseconds = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds)), execute: deadline)
        defer { deadline.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if exchange.start(continuation) { task.resume() }
            }
        } onCancel: {
            exchange.abort(reason: "cancelled by the caller")
            task.cancel()
        }
        if case .failure = result { task.cancel() }
        return try result.get()
    }

    /// Which URL errors prove the request never left: everything else (timeouts, lost connections,
    /// cancellation, which can strike after the request went out) may have reached the server.
    static func classify(_ error: URLError) -> TransportFailure {
        switch error.code {
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .badURL,
            .unsupportedURL, .dataNotAllowed, .internationalRoamingOff, .callIsActive, .secureConnectionFailed,
            .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
            .serverCertificateHasUnknownRoot:
            .notSent(reason: "URLError \(error.code.rawValue): \(error.localizedDescription)")
        default:
            .outcomeUnknown(reason: "URLError \(error.code.rawValue): \(error.localizedDescription)")
        }
    }
}

/// One request's state, shared by the caller, the deadline timer and the session's delegate
/// queue; the first outcome wins and resumes the caller exactly once.
///
/// A lock rather than an actor: URLSession's delegate callbacks are synchronous and must decide
/// (cancel or continue) before they return.
private final class Exchange: @unchecked Sendable {
    private let lock = NSLock()
    private let maximumBytes: Int
    private var continuation: CheckedContinuation<Result<WireResponse, TransportFailure>, Never>?
    private var outcome: Result<WireResponse, TransportFailure>?
    private var started = false
    private var body = Data()

    init(maximumBytes: Int) { self.maximumBytes = maximumBytes }

    /// Installs the caller's continuation; true when the task should be started, false when an
    /// outcome (a cancellation) arrived first and the continuation was resumed with it.
    func start(_ continuation: CheckedContinuation<Result<WireResponse, TransportFailure>, Never>) -> Bool {
        lock.lock()
        if let outcome {
            lock.unlock()
            continuation.resume(returning: outcome)
            return false
        }
        self.continuation = continuation
        started = true
        lock.unlock()
        return true
    }

    /// Ends the request without a response: not sent if the task never started. Whether it
    /// started is read under the same lock that records the outcome, so a `start` racing with
    /// this abort either sees the outcome (and never resumes the task) or is seen as started.
    func abort(reason: String) {
        finish { started in .failure(started ? .outcomeUnknown(reason: reason) : .notSent(reason: reason)) }
    }

    /// Whether a body of `expectedLength` bytes (-1 when unknown) fits; ends the request when not.
    func accepts(expectedLength: Int64) -> Bool {
        guard expectedLength > Int64(maximumBytes) else { return true }
        finish(.failure(.outcomeUnknown(reason: TransportLimits.bodyTooLarge(maximumBytes))))
        return false
    }

    /// Appends a part of the body; false (and the request ends) when the body outgrows the cap.
    func append(_ data: Data) -> Bool {
        lock.lock()
        let fits = outcome == nil && body.count + data.count <= maximumBytes
        if fits { body.append(data) }
        let finished = outcome != nil
        lock.unlock()
        if !fits, !finished { finish(.failure(.outcomeUnknown(reason: TransportLimits.bodyTooLarge(maximumBytes)))) }
        return fits
    }

    /// The task completed: with `response` and the body collected, or with `error`.
    func complete(response: URLResponse?, error: (any Error)?) {
        if let error {
            let failure = (error as? URLError).map(URLSessionTransport.classify) ?? .outcomeUnknown(reason: "\(error)")
            finish(.failure(failure))
            return
        }
        guard let http = response as? HTTPURLResponse else {
            finish(.failure(.outcomeUnknown(reason: "not an HTTP response")))
            return
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key] = value }
        }
        lock.lock()
        let body = self.body
        lock.unlock()
        finish(.success(WireResponse(status: http.statusCode, headers: headers, body: body)))
    }

    private func finish(_ result: Result<WireResponse, TransportFailure>) { finish { _ in result } }

    /// Records the first outcome (made from whether the task started) and resumes the caller.
    private func finish(_ outcomeFor: (_ started: Bool) -> Result<WireResponse, TransportFailure>) {
        lock.lock()
        guard outcome == nil else {
            lock.unlock()
            return
        }
        let result = outcomeFor(started)
        outcome = result
        body = Data()
        let continuation = self.continuation
        self.continuation = nil
        lock.unlock()
        continuation?.resume(returning: result)
    }
}

/// The session's delegate: routes each task's callbacks to its ``Exchange`` and refuses every
/// redirect, so the 3xx response itself completes the task.
private final class ExchangeTable: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var exchanges: [Int: Exchange] = [:]

    func register(_ exchange: Exchange, for task: URLSessionTask) {
        lock.lock()
        exchanges[task.taskIdentifier] = exchange
        lock.unlock()
    }

    func remove(_ task: URLSessionTask) {
        lock.lock()
        exchanges[task.taskIdentifier] = nil
        lock.unlock()
    }

    private func exchange(for task: URLSessionTask) -> Exchange? {
        lock.lock()
        defer { lock.unlock() }
        return exchanges[task.taskIdentifier]
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Following would send the keys and user id in the URL to whatever host the Location names.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let exchange = exchange(for: dataTask), !exchange.accepts(expectedLength: response.expectedContentLength) {
            completionHandler(.cancel)
            dataTask.cancel()
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask) else { return }
        if !exchange.append(data) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange(for: task)?.complete(response: task.response, error: error)
        remove(task)
    }
}
