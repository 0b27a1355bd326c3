import Foundation
import ReplicaModel

/// The subset of App Context filter expressions the simulator understands: comparisons of `id`,
/// `name`, `updated`, `type`, `status` with `==`, `!=`, `<`, `<=`, `>`, `>=` or `LIKE` (with `*`
/// wildcards), joined by `&&`. Values are quoted with `"` or `'`.
struct ObjectFilter {
    struct Condition {
        var field: String
        var op: String
        var value: String
    }

    let conditions: [Condition]

    init?(_ text: String) {
        var conditions: [Condition] = []
        for part in text.components(separatedBy: "&&") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            guard let condition = Self.parse(trimmed) else { return nil }
            conditions.append(condition)
        }
        self.conditions = conditions
    }

    private static func parse(_ text: String) -> Condition? {
        for op in ["==", "!=", "<=", ">=", " LIKE ", "<", ">"] {
            guard let range = text.range(of: op) else { continue }
            let field = text[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
            var value = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
            guard value.count >= 2, let quote = value.first, quote == "\"" || quote == "'", value.last == quote else { return nil }
            value = String(value.dropFirst().dropLast())
            guard ["id", "name", "updated", "type", "status"].contains(field) else { return nil }
            return Condition(field: field, op: op.trimmingCharacters(in: .whitespaces), value: value)
        }
        return nil
    }

    func matches(id: String, fields: [String: JSONValue], updated: String) -> Bool {
        conditions.allSatisfy { condition in
            let actual: String? =
                switch condition.field {
                case "id": id
                case "updated": updated
                default: fields[condition.field]?.stringValue
                }
            guard let actual else { return condition.op == "!=" }
            switch condition.op {
            case "==": return actual == condition.value
            case "!=": return actual != condition.value
            case "<": return actual < condition.value
            case "<=": return actual <= condition.value
            case ">": return actual > condition.value
            case ">=": return actual >= condition.value
            default: return Self.like(actual, condition.value)
            }
        }
    }

    /// `*` matches any run of characters; the rest matches literally.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let parts = pattern.components(separatedBy: "*")
        guard parts.count > 1 else { return text == pattern }
        var rest = Substring(text)
        for (index, part) in parts.enumerated() where !part.isEmpty {
            if index == 0 {
                guard rest.hasPrefix(part) else { return false }
                rest = rest.dropFirst(part.count)
            } else if index == parts.count - 1 {
                return rest.hasSuffix(part)
            } else {
                guard let range = rest.range(of: part) else { return false }
                rest = rest[range.upperBound...]
            }
        }
        return true
    }
}
