import ArgumentParser
import Foundation
import ReplicaStore

/// Writing results and errors.
enum Output {
    /// Prints `value` as pretty JSON with sorted keys on stdout.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// One line on stderr: `pnreplicate: <what went wrong>`.
    static func error(_ error: any Error) {
        let text: String
        switch error {
        case let error as ValidationError: text = error.message
        default: text = String(describing: error)
        }
        FileHandle.standardError.write(Data("pnreplicate: \(text)\n".utf8))
    }

    /// Left-aligned two-column lines.
    static func table(_ rows: [(String, String)]) {
        let width = rows.map(\.0.count).max() ?? 0
        for (key, value) in rows {
            print(key.padding(toLength: width + 2, withPad: " ", startingAt: 0) + value)
        }
    }
}
