import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` on URLSession: portable to Apple platforms (FoundationNetworking on Linux).
public final class URLSessionTransport: Transport {
    private let session: URLSession

    /// A transport with its own ephemeral session; `timeout` bounds each request.
    public init(timeout: TimeInterval = 15) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends the request; connection-level failures map to ``TransportFailure``.
    public func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
        guard let url = URL(string: origin.url(for: request)) else {
            throw .notSent(reason: "cannot build a URL for \(request.operation)")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { throw TransportFailure.outcomeUnknown(reason: "not an HTTP response") }
            var headers: [String: String] = [:]
            for (key, value) in http.allHeaderFields {
                if let key = key as? String, let value = value as? String { headers[key] = value }
            }
            return WireResponse(status: http.statusCode, headers: headers, body: data)
        } catch let failure as TransportFailure {
            throw failure
        } catch let error as URLError {
            throw Self.classify(error)
        } catch {
            throw .outcomeUnknown(reason: "\(error)")
        }
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
