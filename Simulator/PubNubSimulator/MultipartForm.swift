import Foundation

/// A `multipart/form-data` body read into its parts (RFC 7578), as the simulator's storage reads a
/// presigned upload.
///
/// The parser is bounded and total: the boundary comes from the `Content-Type` (1 to 70
/// characters), parts may come in any order, at most ``maxParts`` parts and ``maxHeaderBytes`` of
/// headers per part are read, and anything it cannot read (no boundary, a missing delimiter or
/// closing delimiter, a part without a `Content-Disposition: form-data; name=...`) makes the
/// initializer fail rather than trap. Part bodies are bytes, never decoded.
struct MultipartForm: Sendable {
    /// One part: its field name, the file name when it is a file, its own `Content-Type`, its bytes.
    struct Part: Sendable, Hashable {
        var name: String
        var filename: String?
        var contentType: String?
        var body: Data
    }

    /// The parts, in the order they came.
    var parts: [Part]

    /// The most parts one form may have (the presigned form has ten).
    static let maxParts = 64
    /// The most header bytes one part may have.
    static let maxHeaderBytes = 8 * 1024

    /// The first part named `name`.
    func part(_ name: String) -> Part? { parts.first { $0.name == name } }

    /// The text of the field `name` (its bytes as UTF-8), or nil.
    func field(_ name: String) -> String? { part(name).flatMap { String(validating: $0.body, as: UTF8.self) } }

    /// The boundary of a `multipart/form-data` content type, or nil for another type or an
    /// invalid boundary.
    static func boundary(contentType: String) -> String? {
        let parameters = HeaderParameters(contentType)
        guard parameters.value.lowercased() == "multipart/form-data", let boundary = parameters["boundary"],
              (1...70).contains(boundary.utf8.count),
              boundary.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
        else { return nil }
        return boundary
    }

    /// Reads `body` with the boundary of `contentType`; nil when it is not a well-formed form.
    init?(body: Data, contentType: String) {
        guard let boundary = Self.boundary(contentType: contentType) else { return nil }
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        let separator = Array("\r\n--\(boundary)".utf8)
        // The first delimiter may follow a preamble (after a CRLF) or start the body.
        var cursor: Int
        if bytes.starts(with: delimiter) {
            cursor = delimiter.count
        } else if let found = Self.find(separator, in: bytes, from: 0) {
            cursor = found + separator.count
        } else {
            return nil
        }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" closes the form, CRLF opens a part (transport padding aside).
            if bytes[cursor...].starts(with: Array("--".utf8)) { break }
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") || bytes[cursor] == UInt8(ascii: "\t") { cursor += 1 }
            guard bytes[cursor...].starts(with: Array("\r\n".utf8)) else { return nil }
            cursor += 2
            guard parts.count < Self.maxParts,
                  let headerEnd = Self.find(Array("\r\n\r\n".utf8), in: bytes, from: cursor, limit: Self.maxHeaderBytes),
                  let part = Self.part(headers: bytes[cursor..<headerEnd]),
                  let bodyEnd = Self.find(separator, in: bytes, from: headerEnd + 4)
            else { return nil }
            parts.append(Part(name: part.name, filename: part.filename, contentType: part.contentType,
                              body: Data(bytes[(headerEnd + 4)..<bodyEnd])))
            cursor = bodyEnd + separator.count
        }
        self.parts = parts
    }

    /// The name, file name and content type of a part from its header lines; nil without a
    /// `form-data` disposition that names the field.
    private static func part(headers: ArraySlice<UInt8>) -> (name: String, filename: String?, contentType: String?)? {
        guard let text = String(validating: Array(headers), as: UTF8.self) else { return nil }
        var disposition: HeaderParameters?
        var contentType: String?
        for line in text.components(separatedBy: "\r\n") where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            if name == "content-disposition" { disposition = HeaderParameters(value) }
            if name == "content-type" { contentType = value }
        }
        guard let disposition, disposition.value.lowercased() == "form-data", let name = disposition["name"] else { return nil }
        return (name, disposition["filename"], contentType)
    }

    /// The first index of `needle` in `haystack` at or after `start` (and, with `limit`, starting
    /// within `limit` bytes of it).
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int, limit: Int? = nil) -> Int? {
        guard let first = needle.first, start >= 0, haystack.count >= needle.count else { return nil }
        var index = start
        let last = min(haystack.count - needle.count, limit.map { start + $0 } ?? Int.max)
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

/// A header value with `;`-separated parameters (`form-data; name="a;b"; filename=x`): quoted
/// strings may hold `;` and `\"`, names are case-insensitive.
struct HeaderParameters: Sendable {
    /// The value before the first `;`, trimmed.
    var value: String
    private var parameters: [String: String] = [:]

    init(_ text: String) {
        var pieces: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ";" && !quoted {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        value = pieces[0].trimmingCharacters(in: .whitespaces)
        for piece in pieces.dropFirst() {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            if parameters[name] == nil { parameters[name] = String(piece[piece.index(after: equals)...]).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The parameter `name`, unquoted.
    subscript(name: String) -> String? { parameters[name.lowercased()] }
}
