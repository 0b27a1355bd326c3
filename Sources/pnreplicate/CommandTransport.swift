import Foundation
import PubNubReplica

#if canImport(FoundationNetworking)
    import PubNubWireNIO
    import Synchronization
#endif

/// The transport a command's requests go through.
///
/// On Linux it is AsyncHTTPClient (`PubNubWireNIO`): FoundationNetworking's URLSession runs each
/// request through libcurl and several Dispatch queue hops, and a drain of 2,000 publishes spent
/// about twice the CPU per request on it (docs/performance.md, "The command's transport"). On Apple
/// platforms it is URLSession, the system's own stack.
///
/// AsyncHTTPClient wants its client shut down before it is released, and a command's process ends
/// with the command: so each timeout's transport is made once and kept for the process's life
/// instead of living and dying with one ``Session``.
///
/// With a proxy in the environment (`https_proxy`, `http_proxy`, `all_proxy`, either case) the
/// command stays on URLSession, whose libcurl honours them; AsyncHTTPClient would ignore them.
enum CommandTransport {
    #if canImport(FoundationNetworking)
        private static let transports = Mutex<[Int: AsyncHTTPClientTransport]>([:])
    #endif

    /// Whether the environment names a proxy for the command's requests.
    static var proxied: Bool {
        let environment = ProcessInfo.processInfo.environment
        return ["https_proxy", "http_proxy", "all_proxy"].contains { name in
            [name, name.uppercased()].contains { environment[$0].map { !$0.isEmpty } ?? false }
        }
    }

    /// The transport whose requests each end within `timeout` seconds (a long poll within its own).
    static func make(timeout: TimeInterval) -> any Transport {
        #if canImport(FoundationNetworking)
            guard !proxied else { return URLSessionTransport(timeout: timeout) }
            let milliseconds = Int((timeout * 1000).rounded())
            return transports.withLock { transports in
                if let transport = transports[milliseconds] { return transport }
                let transport = AsyncHTTPClientTransport(timeout: .milliseconds(milliseconds))
                transports[milliseconds] = transport
                return transport
            }
        #else
            return URLSessionTransport(timeout: timeout)
        #endif
    }
}
