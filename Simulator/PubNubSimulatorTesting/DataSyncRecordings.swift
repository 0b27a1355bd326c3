import Foundation
import PubNubWire
import ReplicaModel

/// One exchange of `../shared/recordings/datasync/` (answers PubNub's SDKs recorded from DataSync
/// or wrote as stubs; each file's `provenance` says which): the request as sent, the answer as
/// received. The wire's, the simulator's and the replicator's tests read them through this type.
public struct DataSyncRecording: Decodable, Sendable {
    /// `datasync_users-02`.
    public let id: String
    /// `datasync_users`, `datasync_errors`, `datasync_events`…
    public let family: String
    /// `recorded-real` (from the live service) or `hand-mock`.
    public let provenance: String
    /// The request's method.
    public let method: String
    /// The request's path, percent-encoded as sent.
    public let requestPath: String?
    /// The request's query, as sent (nil when the source kept none).
    public let requestQuery: String?
    /// The request's body (nil when it had none or the source kept none).
    public let requestBody: String?
    /// The request's `Content-Type` and `If-Match`, where the source kept them.
    public let requestHeaders: [String: String]?
    /// The answer's status.
    public let status: Int
    /// The answer's body.
    public let body: String
    /// The answer's content type, where kept.
    public let responseContentType: String?

    /// `../shared/recordings/datasync` from the package root.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("../shared/recordings/datasync").standardizedFileURL

    /// Every recording of the folder but `index.json`, by id; nil when the folder is missing
    /// (callers fail under CI, where it must be there).
    public static func all() throws -> [DataSyncRecording]? {
        guard let files = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) else { return nil }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try files.filter { $0.pathExtension == "json" && $0.lastPathComponent != "index.json" }
            .map { try decoder.decode(DataSyncRecording.self, from: Data(contentsOf: $0)) }.sorted { $0.id < $1.id }
    }

    /// The recordings of `datasync_<name>`.
    public static func family(_ name: String) throws -> [DataSyncRecording] {
        try all()?.filter { $0.family == "datasync_" + name } ?? []
    }

    /// The answer's body, parsed; nil for an empty or unreadable one.
    public var json: JSONValue? { JSONValue.parse(Data(body.utf8)) }
    /// The request body, parsed.
    public var requestJSON: JSONValue? { requestBody.flatMap { JSONValue.parse(Data($0.utf8)) } }
    /// The path's segments, percent-decoded.
    public var segments: [String] { (requestPath ?? "").split(separator: "/").map { PercentEncoding.decode(String($0)) ?? String($0) } }
    /// The resource a `/v1/datasync/subkeys/{sub}/{resource}` path names.
    public var resource: DataSyncResource? { segments.count >= 5 ? DataSyncResource(rawValue: segments[4]) : nil }
    /// The record id the path names, if any.
    public var recordId: String? { segments.count >= 6 ? segments[5] : nil }
    /// A request header, by name in any case.
    public func requestHeader(_ name: String) -> String? {
        requestHeaders?.first { $0.key.lowercased() == name.lowercased() }?.value
    }
    /// The query as name → value, percent-decoded, without the SDK's `pnsdk`.
    public var query: [String: String] {
        var result: [String: String] = [:]
        for pair in (requestQuery ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts[0] != "pnsdk" else { continue }  // split keeps one part at least: "=x" is ["", "x"]
            result[parts[0]] = parts.count > 1 ? (PercentEncoding.decode(parts[1]) ?? parts[1]) : ""
        }
        return result
    }
    /// The answer as a transport would hand it over.
    public func response() -> WireResponse {
        WireResponse(status: status, headers: ["Content-Type": responseContentType ?? "application/json"], body: Data(body.utf8))
    }
}
