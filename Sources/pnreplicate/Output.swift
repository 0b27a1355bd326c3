import ArgumentParser
import Foundation
import PubNubReplica

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing results and errors.
enum Output {
    /// Prints `value` as pretty JSON with sorted keys on stdout.
    static func json<T: Encodable>(_ value: T) throws {
        print(try prettyJSON(value))
    }

    /// `value` as pretty-printed JSON with sorted keys (what ``json(_:)`` prints).
    static func prettyJSON<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `value` as one line of compact JSON with sorted keys (JSON lines), without the newline.
    static func jsonLine<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// One line on stderr: `pnreplicate: <what went wrong>`.
    static func error(_ error: any Error) {
        let text: String
        switch error {
        case let error as ValidationError: text = error.message
        default: text = String(describing: error)
        }
        // Errors quote what servers, tokens and files said: escaped for the terminal.
        standardError("pnreplicate: \(terminalSafe(text))\n")
    }

    /// Writes `text` to stderr, ignoring failure. Every stderr write of the CLI goes through here:
    /// `FileHandle.write` traps when the descriptor is closed or the pipe has no reader, and a
    /// diagnostic that cannot be shown must not turn exit status 1 into a crash.
    static func standardError(_ text: String) { writeAll(text, to: STDERR_FILENO) }

    /// Writes `text` to stdout unbuffered (a parent reading a pipe sees it at once). Returns
    /// false when it could not be written (the reader went away: `listen | head -2`); the rest is
    /// dropped, never a crash.
    @discardableResult
    static func standardOutput(_ text: String) -> Bool { writeAll(text, to: STDOUT_FILENO) }

    @discardableResult
    private static func writeAll(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return false  // closed, broken pipe, full disk: nobody can read it; drop the rest
            }
        }
        return true
    }

    /// Makes the standard streams safe to write, before anything runs: SIGPIPE is ignored (a
    /// reader that went away gives the writer EPIPE instead of killing the process), and a
    /// closed stdin, stdout or stderr (`2>&-`) is reopened on /dev/null, so no file the process
    /// opens later (the store) can take descriptor 0, 1 or 2 and receive output meant for them.
    static func prepareStandardStreams() {
        signal(SIGPIPE, SIG_IGN)
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 {
            // open returns the lowest free descriptor: this one, as the lower ones are checked first.
            _ = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
        }
    }

    /// Left-aligned two-column lines.
    static func table(_ rows: [(String, String)]) {
        print(tableText(rows), terminator: "")
    }

    /// The lines ``table(_:)`` prints, each ending in a newline.
    static func tableText(_ rows: [(String, String)]) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        var text = ""
        for (key, value) in rows {
            text += key + String(repeating: " ", count: width + 2 - key.count) + terminalSafe(value) + "\n"
        }
        return text
    }
}
