import Crypto
import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Diagnostics: what a support screen shows or a bug report attaches (``report(hashingIdentifiers:)``),
/// and the checks `pnreplicate doctor` makes (``checkup(stuckAfter:)``); `docs/diagnostics.md`.
///
/// ```swift
/// let report = try await replica.diagnostics.report(hashingIdentifiers: true)
/// try report.json().write(to: attachmentURL)
/// ```
///
/// Reached through ``Replica/diagnostics``: a value made per access, holding only the replica.
public struct ReplicaDiagnostics<Custom: ChatCustomData>: Sendable {
    /// The replica these calls read.
    let replica: Replica<Custom>

    /// Everything a support desk needs about this replica now, in one value: versions, the
    /// redacted configuration, the store's size and budget, the outbox by state with why each
    /// op waits, dead letters and conflicts, each channel's freshness, the live state's recent
    /// changes, the token, the server clock's offset, the last requests and the DataSync codes
    /// seen (``DiagnosticsReport``; `docs/diagnostics.md`). Reads the store once; sends nothing.
    ///
    /// - Parameter hashingIdentifiers: replace the user id and every channel id by a hash
    ///   (`id-3f2a…`: the same id always gives the same hash, so a report still tells channels
    ///   apart), for a report that leaves the device.
    ///
    /// ```swift
    /// let report = try await replica.diagnostics.report(hashingIdentifiers: true)
    /// try report.json().write(to: attachmentURL)
    /// ```
    ///
    /// While suspended, the store's parts are nil and the rest is reported.
    public func report(hashingIdentifiers: Bool = false) async throws -> DiagnosticsReport {
        let configuration = replica.configuration, hub = replica.hub, client = replica.client, queries = replica.queries
        let parts = await replica.parts
        let now = configuration.clock.now
        let status = hub.status
        let access = client.access
        var secrets = [configuration.publishKey, configuration.subscribeKey, configuration.authKey, configuration.cipherKey, access.token]
            .compactMap { $0 }.filter { !$0.isEmpty }
        if let parsed = access.parsedToken { secrets.append(parsed.text) }
        var read: DiagnosticsParts<Custom>.DiagnosticsRead?
        var hot: Set<String> = []
        if let parts {
            read = try await DiagnosticsParts<Custom>.readDiagnostics(parts, queries: queries)
            hot = Set(await parts.reconciler.hotChannels)
        }
        var ids: Set<String> = [replica.userId]
        if let read { ids.formUnion(read.channelIds) }
        let redaction = DiagnosticsRedaction(secrets: secrets, hashing: hashingIdentifiers ? ids : [])

        let report = DiagnosticsReport(
            madeAt: now,
            versions: ["pnreplicate": PubNubConfiguration.libraryVersion, "schema": read?.status.schemaVersion ?? "unknown",
                       "sqlite": read?.sqliteVersion ?? "unknown"],
            configuration: DiagnosticsParts<Custom>.redactedConfiguration(configuration, redaction: redaction),
            store: read.map { DiagnosticsParts<Custom>.storeReport($0) },
            outbox: read.map { DiagnosticsParts<Custom>.outboxReport($0.entries, now: now, redaction: redaction) },
            channels: read.map { DiagnosticsParts<Custom>.channelsReport($0.checkpoints, hot: hot, now: now, redaction: redaction) },
            live: DiagnosticsReport.Live(
                status: redaction.text(status.description), lastSyncedAt: status.lastSyncedAt,
                transitions: hub.transitions.map { "\(ISOTimestamp(date: $0.at)) \(redaction.text($0.connection.description))" }),
            token: DiagnosticsParts<Custom>.tokenReport(access, status: status, now: now, redaction: redaction),
            serverClockOffset: parts?.reconciler.serverClockOffset?.seconds,
            requests: client.journal.entries().map { redaction.request($0) },
            errorCodes: client.journal.codes(),
            expiring: status.expiring.map { redaction.text($0.description) })
        return report
    }
}

extension Replica {
    /// Diagnostics: the report a support screen shows and the doctor's checks (``ReplicaDiagnostics``).
    public nonisolated var diagnostics: ReplicaDiagnostics<Custom> { ReplicaDiagnostics(replica: self) }
}

/// The parts of a diagnostics report, read and redacted (``ReplicaDiagnostics/report(hashingIdentifiers:)``).
enum DiagnosticsParts<Custom: ChatCustomData> {
    /// What the report reads of the store, in one read.
    struct DiagnosticsRead: Sendable {
        var status: StoreStatus
        var sqliteVersion: String?
        var walBytes: Int
        var entries: [OutboxGlance]
        var checkpoints: [SyncCheckpoint]
        /// Every channel id the store knows (for hashing).
        var channelIds: Set<String>
    }

    static func readDiagnostics(_ parts: Replica<Custom>.Parts, queries: ChatQueries<Custom>) async throws -> DiagnosticsRead {
        let store = parts.store
        let status = try await store.maintenance.status()
        let outbox = OutboxGlance.all(), checkpoints = queries.checkpoints(), facts = DiagnosticsReads.facts()
        let (found, entries, stored) = try await store.fetch(StoreQuery { db in
            (try facts.fetch(db), try outbox.fetch(db), try checkpoints.fetch(db))
        })
        let (version, channels) = found
        let wal = DiagnosticsReads.walBytes(ofStoreAt: store.path)
        // Every channel the store names: its channels and memberships, its checkpoints' scopes,
        // and the channels its ops write to (a send to a channel the store knows nothing else of).
        var ids = Set(channels).union(entries.compactMap(\.channel))
        for checkpoint in stored {
            if let colon = checkpoint.scope.firstIndex(of: ":") { ids.insert(String(checkpoint.scope[checkpoint.scope.index(after: colon)...])) }
        }
        return DiagnosticsRead(status: status, sqliteVersion: version, walBytes: wal, entries: entries, checkpoints: stored, channelIds: ids)
    }

    static func redactedConfiguration(_ configuration: ReplicaConfiguration, redaction: DiagnosticsRedaction) -> [String: String] {
        func set(_ value: String?) -> String { (value?.isEmpty ?? true) ? "none" : "set" }
        var fields: [String: String] = [
            "publishKey": set(configuration.publishKey), "subscribeKey": set(configuration.subscribeKey),
            "authKey": set(configuration.authKey), "cipherKey": set(configuration.cipherKey),
            "tokenProvider": configuration.tokenProvider == nil ? "none" : "set",
            "userId": redaction.id(configuration.userId), "origin": configuration.origin,
            "objectBackend": configuration.objectBackend.name,
            "channelGroups": String(configuration.live.channelGroups.count),
            "suspendBudgetSeconds": String(configuration.suspendBudget), "fileCacheBytes": String(configuration.fileCacheBytes),
            "retention": configuration.storeOptions.retention?.summary ?? "none",
        ]
        switch configuration.store {
        case .file: fields["store"] = "file"
        case .inMemory: fields["store"] = "in memory"
        }
        if configuration.cipherKey != nil { fields["cryptor"] = "\(configuration.cryptor)" }
        return fields
    }

    static func storeReport(_ read: DiagnosticsRead) -> DiagnosticsReport.Store {
        let storage = read.status.storage
        return DiagnosticsReport.Store(
            databaseBytes: storage.databaseBytes, usedBytes: storage.usedBytes, freeBytes: max(0, storage.databaseBytes - storage.usedBytes),
            walBytes: read.walBytes, budget: storage.retention?.summary, evictedMessages: storage.evictedMessages,
            evictedChannels: storage.evictedChannels, rowCounts: read.status.rowCounts, pendingMigrations: read.status.pendingMigrations)
    }

    /// How many ops of each list a report names (the counts cover them all).
    static var diagnosticsOpsListed: Int { 20 }

    static func outboxReport(_ entries: [OutboxGlance], now: Date, redaction: DiagnosticsRedaction) -> DiagnosticsReport.Outbox {
        var states: [String: Int] = [:], reasons: [String: Int] = [:]
        var waiting: [DiagnosticsReport.Op] = [], dead: [DiagnosticsReport.Op] = [], conflicts: [DiagnosticsReport.Op] = []
        var lanes: [String: String] = [:]   // lane -> the first op still waiting in it
        let present = Set(entries.map(\.id))
        var oldest: Date?
        // Every op is counted; only the listed ones are described and redacted (a large outbox
        // holds thousands: describing them all was most of the report's time).
        for entry in entries {
            states[entry.state.rawValue, default: 0] += 1
            let why = DiagnosticsRedaction.why(entry, now: now, firstInLane: lanes[entry.lane], present: present)
            func op() -> DiagnosticsReport.Op {
                DiagnosticsReport.Op(
                    id: entry.id, kind: entry.kind.rawValue, state: entry.state.rawValue, target: redaction.target(entry.target),
                    attempts: entry.attempts, why: redaction.text(why.detail()), ageSeconds: now.timeIntervalSince(entry.createdAt))
            }
            switch entry.state {
            case .dead: if dead.count < diagnosticsOpsListed { dead.append(op()) }
            case .conflict: if conflicts.count < diagnosticsOpsListed { conflicts.append(op()) }
            case .pending, .inflight, .ambiguous:
                reasons[why.reason, default: 0] += 1
                oldest = min(oldest ?? entry.createdAt, entry.createdAt)
                if lanes[entry.lane] == nil { lanes[entry.lane] = entry.id }
                if waiting.count < diagnosticsOpsListed { waiting.append(op()) }
            }
        }
        return DiagnosticsReport.Outbox(
            states: states, oldestAgeSeconds: oldest.map { now.timeIntervalSince($0) }, reasons: reasons, waiting: waiting,
            deadLetters: dead, conflicts: conflicts)
    }

    /// How many channels a report names (the least fresh; the counts cover them all).
    static var diagnosticsChannelsListed: Int { 40 }

    static func channelsReport(
        _ checkpoints: [SyncCheckpoint], hot: Set<String>, now: Date, redaction: DiagnosticsRedaction
    ) -> DiagnosticsReport.Channels {
        var byChannel: [String: DiagnosticsReport.Channel] = [:]
        for checkpoint in checkpoints {
            guard let colon = checkpoint.scope.firstIndex(of: ":") else { continue }
            let kind = checkpoint.scope[..<colon], channel = String(checkpoint.scope[checkpoint.scope.index(after: colon)...])
            var entry = byChannel[channel] ?? DiagnosticsReport.Channel(
                id: redaction.id(channel), hot: hot.contains(channel), historyThrough: nil, liveThrough: nil,
                ageSeconds: .infinity, gap: false)
            switch kind {
            case "history":
                entry.historyThrough = checkpoint.applied?.description
                // A catch-up that stopped part way: the messages between `applied` and the fill's
                // cursor are still missing.
                if checkpoint.fillTop != nil { entry.gap = true }
            case "live": entry.liveThrough = checkpoint.applied?.description
            case "reactions", "members": if checkpoint.fillTop != nil { entry.gap = true }
            default: continue
            }
            entry.ageSeconds = min(entry.ageSeconds, now.timeIntervalSince(checkpoint.updatedAt))
            byChannel[channel] = entry
        }
        let all = byChannel.values.sorted { ($0.ageSeconds, $0.id) > ($1.ageSeconds, $1.id) }
        return DiagnosticsReport.Channels(
            count: all.count, hot: all.filter(\.hot).count, withGap: all.filter(\.gap).count,
            stalest: Array(all.prefix(diagnosticsChannelsListed)))
    }

    static func tokenReport(
        _ access: AccessControl, status: ReplicaStatus, now: Date, redaction: DiagnosticsRedaction
    ) -> DiagnosticsReport.Token {
        guard access.token != nil else {
            return DiagnosticsReport.Token(kind: "none", expires: nil, expired: false, waitingFor: access.waitingFor?.rawValue, grants: [:])
        }
        guard let token = access.parsedToken else {
            return DiagnosticsReport.Token(
                kind: "legacy auth key", expires: nil, expired: false, waitingFor: access.waitingFor?.rawValue, grants: [:])
        }
        var grants: [String: String] = [:]
        for (section, map) in [("resources", token.grants.resources), ("patterns", token.grants.patterns)] {
            for (kind, names) in map {
                for (name, permissions) in names {
                    let granted = AccessPermissions.named.filter { permissions.contains($0.1) }.map(\.0)
                    grants["\(section).\(kind.grantKey).\(section == "patterns" ? name : redaction.id(name))"] = granted.joined(separator: ",")
                }
            }
        }
        return DiagnosticsReport.Token(
            kind: "token", expires: token.expires, expired: token.isExpired(at: now), waitingFor: access.waitingFor?.rawValue,
            grants: grants)
    }
}

/// How a diagnostics report keeps secrets and personal data out: the one owner of those rules
/// for the report (the request journal owns them for requests: ``RequestJournal``).
struct DiagnosticsRedaction: Sendable {
    /// Texts that must never appear: keys, tokens.
    let secrets: [String]
    /// The ids to hash (empty: none), each with its hash, made once per report.
    private let hashed: [String: String]
    /// Whether any id is hashed.
    var hashing: Bool { !hashed.isEmpty }

    /// A redaction of `secrets` that hashes the ids in `hashing` (none when empty).
    init(secrets: [String], hashing: Set<String>) {
        self.secrets = secrets
        hashed = Dictionary(uniqueKeysWithValues: hashing.map { ($0, Self.hash($0)) })
    }

    /// `id` hashed when hashing is on: `id-` and 12 hex digits of its SHA-256.
    func id(_ id: String) -> String {
        hashed[id] ?? id
    }

    static func hash(_ id: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = Array("id-".utf8)
        for byte in SHA256.hash(data: Data(id.utf8)).prefix(6) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// A text with every secret replaced by `[redacted]` and every hashed id (between separators)
    /// by its hash.
    func text(_ text: String) -> String {
        var result = text
        for secret in secrets where result.contains(secret) { result = result.replacingOccurrences(of: secret, with: "[redacted]") }
        guard hashing else { return result }
        // Split at the separators ids sit between in paths, targets and lists.
        let separators: Set<Character> = ["/", ",", ":", " ", "&", "=", "(", ")", "\"", "'"]
        var out = "", token = ""
        for character in result {
            if separators.contains(character) {
                out += id(token) + String(character)
                token = ""
            } else {
                token.append(character)
            }
        }
        return out + id(token)
    }

    /// An op's target (`message:general:…`) with its ids hashed.
    func target(_ target: String) -> String { text(target) }

    /// A journal entry with its path, query and failure redacted (ids hashed when asked).
    func request(_ entry: RequestJournal.Entry) -> RequestJournal.Entry {
        var copy = entry
        copy.path = text(entry.path)
        copy.query = text(entry.query)
        copy.failure = entry.failure.map(text)
        return copy
    }

    /// Why `entry` waits, as a reason (counted over the outbox) and a detail line, made only
    /// for the ops a report lists. `firstInLane`: the first op still waiting in the entry's lane,
    /// if one came before it.
    static func why(
        _ entry: OutboxGlance, now: Date, firstInLane: String?, present: Set<String>
    ) -> (reason: String, detail: () -> String) {
        func failure() -> String? { entry.lastFailure.map(\.safeLine) }
        switch entry.state {
        case .dead:
            return ("refused for good", { "refused for good (retry or discard it): \(failure() ?? "no failure recorded")" })
        case .conflict:
            return ("conflict", { "the server holds a newer version: waits for the app (retry rebases it, discard drops it)" })
        case .inflight:
            return ("being sent", { "being sent (attempt \(entry.attempts))" })
        case .ambiguous:
            return ("outcome unknown", { "sent before without a known answer: probed before it goes again" })
        case .pending:
            if entry.waitsForToken { return ("waiting for a token", { "waits for a new Access Manager token: \(failure() ?? "")" }) }
            if let dependsOn = entry.dependsOn, present.contains(dependsOn) {
                return ("waiting for the op it depends on", { "waits for op \(dependsOn) to be sent first" })
            }
            if let firstInLane, firstInLane != entry.id {
                return ("behind an earlier op of its lane", { "behind op \(firstInLane) of its lane: ops of a lane go in order" })
            }
            if let next = entry.nextAttemptAt, next > now {
                return ("backing off", { "backing off until \(ISOTimestamp(date: next)) after: \(failure() ?? "a failure")" })
            }
            return ("due", { entry.attempts == 0 ? "due: goes at the next drain" : "due again after: \(failure() ?? "a failure")" })
        }
    }
}
