import Foundation

/// Reads PubNub's error bodies (every family in the protocol reference, §9.2) into ``ServiceError``.
enum ErrorDecoding {
    static func serviceError(operation: String, response: WireResponse) -> ServiceError {
        let retryAfter = response.header("retry-after").flatMap(parseRetryAfter)
        var family = ServiceError.Family.unknown
        var message = ""
        var details: [String] = []
        var codes: [String] = []
        if let json = try? JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed]) {
            if let array = json as? [Any] {
                family = .publishArray
                message = array.count > 1 ? (array[1] as? String ?? "") : ""
            } else if let object = json as? [String: Any] {
                if let items = DataSyncErrors.items(object) {
                    family = .dataSync
                    codes = items.compactMap(\.code)
                    details = items.map(\.line)
                    message = items.first.map { $0.message.isEmpty ? ($0.code ?? "") : $0.message } ?? ""
                } else if let text = object["error_message"] as? String {
                    family = .history
                    message = text
                } else if let error = object["error"] as? [String: Any] {
                    family = .object
                    message = error["message"] as? String ?? ""
                    details = (error["details"] as? [[String: Any]] ?? []).map { detail in
                        "\(detail["location"] as? String ?? "?"): \(detail["message"] as? String ?? "")"
                    }
                } else if let text = object["message"] as? String {
                    family = .legacyService
                    message = text
                } else if let text = object["error"] as? String {
                    family = .push
                    message = text
                }
            }
        }
        if family == .unknown, let (code, text) = storageError(response.body) {
            // S3's XML error of a file upload or download: `<Error><Code>…</Code><Message>…</Message>…`.
            family = .storage
            message = code + (text.isEmpty ? "" : ": " + text)
        }
        if message.isEmpty {
            message = String(decoding: response.body.prefix(200), as: UTF8.self)
            if message.isEmpty { message = "HTTP \(response.status) with no body" }
        }
        let reason: ServiceError.Reason? = switch family {
        case .push: PubNubPush.reason(status: response.status, message: message)
        case .dataSync: DataSyncErrors.reason(codes: codes)
        default: nil
        }
        return ServiceError(
            operation: operation, status: response.status, reason: reason, family: family, message: message,
            retryAfter: retryAfter, details: details, codes: codes)
    }

    /// The `Code` and `Message` of S3's XML error body, if the body is one (read by hand: no XML
    /// parser is needed for two elements, and only the first 64 KiB are looked at).
    static func storageError(_ body: Data) -> (code: String, message: String)? {
        let text = String(decoding: body.prefix(65_536), as: UTF8.self)
        guard text.contains("<Error>"), let code = element("Code", in: text) else { return nil }
        return (String(code.prefix(100)), String((element("Message", in: text) ?? "").prefix(300)))
    }

    private static func element(_ name: String, in text: String) -> String? {
        guard let open = text.range(of: "<\(name)>"), let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex)
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    /// `Retry-After` as delta-seconds or an HTTP-date (then relative to now); nil for anything
    /// else (`nan`, `inf`, text). ``ServiceError`` clamps it to `0...ServiceError.maxRetryAfter`.
    static func parseRetryAfter(_ value: String) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return seconds.isFinite ? seconds : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return date.timeIntervalSinceNow
    }
}
