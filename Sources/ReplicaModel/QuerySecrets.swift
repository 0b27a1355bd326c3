import Foundation

/// The query items that carry secrets (`auth`: an Access Manager token; `signature`: a request
/// signed with the secret key), and the one way they are hidden from text that is stored, logged
/// or printed: error messages kept in the outbox, the simulator's request log, the dry run.
public enum QuerySecrets {
    /// The names of the query items whose values are never shown.
    public static let names: Set<String> = ["auth", "signature"]

    /// `text` with the value of every `auth=` and `signature=` query item replaced by `REDACTED`
    /// (up to the next `&`, `#`, space, quote or line end).
    ///
    /// ```swift
    /// QuerySecrets.redacted("/publish/…?auth=qEF2…&uuid=me")   // "/publish/…?auth=REDACTED&uuid=me"
    /// ```
    /// A revoke's path (`/v3/pam/{sub}/grant/{token}`) carries the token too: its last segment is
    /// replaced as well.
    public static func redacted(_ text: String) -> String {
        var text = text
        if let grant = text.range(of: "/grant/"), text.contains("/v3/pam/") {
            let end = text[grant.upperBound...].firstIndex { "?# \n".contains($0) } ?? text.endIndex
            if grant.upperBound < end { text.replaceSubrange(grant.upperBound..<end, with: "REDACTED") }
        }
        guard text.contains("auth=") || text.contains("signature=") else { return text }
        var result = ""
        var rest = Substring(text)
        while let range = rest.range(of: #"(auth|signature)="#, options: .regularExpression) {
            result += rest[..<range.upperBound] + "REDACTED"
            rest = rest[range.upperBound...].drop { !"&# \n\t\"'".contains($0) }
        }
        return result + rest
    }
}
