#if HTTPSimulator
import Foundation
import ReplicaModel

/// One line per request the HTTP front end receives, `METHOD /path?query` as it arrived (before
/// any ``ServerMisbehaviour`` rewrite), appended to a file. Tokens and signatures are written as
/// `auth=REDACTED` and `signature=REDACTED` (`QuerySecrets`).
///
/// A test counts lines to check that a client stopped asking, for example that a pull against a
/// history that ignores `start` gave up after a few identical requests.
public actor RequestLog {
    private let handle: FileHandle

    /// A log written to `path`, which is created or emptied.
    public init(path: String) throws(RequestLogError) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw RequestLogError(path: path) }
        self.handle = handle
    }

    /// Appends one line. A failed write is dropped: the log must never change an answer.
    public func record(method: String, uri: String) {
        try? handle.write(contentsOf: Data("\(method) \(QuerySecrets.redacted(uri))\n".utf8))
    }
}

/// The request log's file could not be created or opened for writing.
public struct RequestLogError: Error, CustomStringConvertible {
    /// The path asked for.
    public var path: String

    /// `cannot write the request log at PATH`.
    public var description: String { "cannot write the request log at \(path)" }
}
#endif
