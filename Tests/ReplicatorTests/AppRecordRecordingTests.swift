import Foundation
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel
@testable import ReplicaStore
@testable import Replicator
import Testing

/// Every entities and relationships answer of `../shared/recordings/datasync/` lands in a store
/// as app-data records with its fields: each row is mapped (``ReplicaModel/AppRecord``), written
/// under a declaration of its class (with its scalar payload members declared as properties), read
/// back equal, compared with the recording's raw JSON member by member, and found again by each
/// declared property through the query. Without the folder the test passes quietly, except under CI.
@Suite("App-data records from the recordings")
struct AppRecordRecordingTests {
    /// The kind a raw scalar is declared as, or nil for a member a property cannot hold.
    static func kind(of value: JSONValue) -> DataSyncValueKind? {
        for kind in [DataSyncValueKind.datetime, .date, .boolean, .number, .string] where kind.accepts(value) { return kind }
        return nil
    }

    /// A declaration of each class the rows hold, with up to six of their scalar members.
    static func declarations(_ records: [AppRecord]) -> [AppClass] {
        Dictionary(grouping: records, by: \.className).map { name, records in
            var properties: [AppProperty] = []
            for (key, value) in records[0].payload.sorted(by: { $0.key < $1.key }) where properties.count < AppClass.maxProperties {
                if let kind = kind(of: value) { properties.append(AppProperty(key, kind: kind, isOptional: true)) }
            }
            let versions = Array(Set(records.map(\.classVersion))).sorted()
            if records[0].kind == .relationship {
                return AppClass(relationship: name, from: "A", to: "B", versions: versions, properties: properties)
            }
            return AppClass(entity: name, versions: versions, properties: properties)
        }
    }

    @Test("every entities and relationships answer lands with every field", arguments: ["entities", "relationships"])
    func answersLand(_ family: String) throws {
        let recordings = try DataSyncRecording.family(family)
        if recordings.isEmpty {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("no \(family) recordings at \(DataSyncRecording.folder.path)") }
            return
        }
        let kind: AppRecord.Kind = family == "entities" ? .entity : .relationship
        var landed = 0, answers = 0
        for recording in recordings {
            guard case .object(let object)? = recording.json else {
                #expect(recording.method == "DELETE" && recording.body.isEmpty, "\(recording.id): only a delete answers empty")
                continue
            }
            answers += 1
            let rows: [DataSyncRow]
            let raws: [[String: JSONValue]]
            if case .array(let items)? = object["data"] {
                rows = try PubNubDataSync.page(from: recording.response(), operation: recording.id).data
                raws = items.map { $0.objectValue ?? [:] }
            } else {
                rows = [try PubNubDataSync.row(from: recording.response(), operation: recording.id)]
                raws = [object["data"]?.objectValue ?? [:]]
            }
            // A spec stub lists bare rows (`{"id":"a"}`): their class is the one the request listed.
            let listed = recording.query["entity_class"] ?? recording.query["relationship_class"]
            let records = rows.compactMap { AppRecord(row: $0, kind: kind, className: listed, classVersion: 1) }
            #expect(records.count == rows.count, "\(recording.id): every row has a class")

            let store = try ChatStore<DefaultChatCustom>.inMemory()
            let classes = Self.declarations(records)
            let outcome = try store.transactionNow { tx in
                _ = try tx.appRecords.bind(classes)
                return try tx.appRecords.apply(records)
            }
            #expect(outcome.skipped.isEmpty && outcome.inserted == Set(records.map(\.id)).count, "\(recording.id): \(outcome)")
            for (record, raw) in zip(records, raws) {
                let stored = try store.fetchNow(AppRecordQueries.record(kind, id: record.id))
                #expect(stored == record, "\(recording.id) \(record.id): read back equal")
                func time(_ key: String) -> ISOTimestamp? { raw[key]?.stringValue.flatMap { try? ISOTimestamp(parsing: $0) } }
                #expect(stored?.eTag == raw["eTag"]?.stringValue && stored?.status == raw["status"]?.stringValue, "\(recording.id): eTag, status")
                #expect(stored?.payload == raw["payload"]?.objectValue ?? [:], "\(recording.id): payload")
                #expect(stored?.createdAt == time("createdAt") && stored?.updatedAt == time("updatedAt") && stored?.expiresAt == time("expiresAt"),
                        "\(recording.id): timestamps")
                #expect(stored?.className == (raw["entityClass"] ?? raw["relationshipClass"])?.stringValue ?? listed, "\(recording.id): class")
                if kind == .relationship {
                    #expect(stored?.endA == raw["entityAId"]?.stringValue && stored?.endB == raw["entityBId"]?.stringValue, "\(recording.id): ends")
                }
                let declaration = classes.first { $0.name == record.className }!
                for property in declaration.properties {
                    guard let value = property.value(in: record.payload) else { continue }
                    let found = try store.fetchNow(AppRecordQueries.records(AppRecordFilter(
                        record.className, where: [.init(property.name, .equal, value), .init("id", .equal, .string(record.id))])))
                    #expect(found.map(\.id) == [record.id], "\(recording.id): found by \(property.name)")
                }
                landed += 1
            }
        }
        #expect(answers > 10 && landed >= answers, "\(family): \(answers) answers, \(landed) records")
    }

    @Test("every recorded entity and relationship event applies live to a declared class: creates and updates land with their fields, a delete removes the record")
    func eventsLand() async throws {
        let recordings = try DataSyncRecording.family("events")
        guard !recordings.isEmpty else { return }
        var applied = 0
        for recording in recordings {
            let answer = try PubNubClient.subscribeAnswer(from: recording.response())
            guard let envelope = answer.envelopes.first, case .dataSync(let event) = envelope.event, AppDataLive.concerns(event) else { continue }
            let replay = try DataSyncBackendTests.Replay(recording)
            let kind: AppRecord.Kind = event.type == "relationship" ? .relationship : .entity
            let name = try #require(event.className, "\(recording.id): the class is in the metadata")
            let version = event.classVersion ?? 1
            let declaration = kind == .entity ? AppClass(entity: name, versions: [version])
                : AppClass(relationship: name, from: "A", to: "B", versions: [version])
            try replay.store.transactionNow { tx in
                _ = try tx.appRecords.bind([declaration])
                if event.verb == .delete {
                    // Something to delete: the record as an earlier version.
                    _ = try tx.appRecords.apply([AppRecord(kind: kind, id: event.row.id, className: name, classVersion: version,
                                                           eTag: "old", updatedAt: ISOTimestamp(nanoseconds: 0))])
                }
            }
            let result = try await replay.reconciler.live.applyLive(answer.envelopes, advancing: [], through: nil)
            #expect(result.unreadableChannels.isEmpty && result.objectsChanged == 1, "\(recording.id): \(result.applied)")
            let stored = try await replay.store.fetch(AppRecordQueries.record(kind, id: event.row.id))
            if event.verb == .delete {
                #expect(stored == nil, "\(recording.id): deleted")
            } else {
                #expect(stored == AppRecord(row: event.row, kind: kind, className: name, classVersion: version), "\(recording.id)")
                #expect(stored?.payload == event.row.payload ?? [:] && stored?.eTag == event.row.eTag, "\(recording.id): fields")
                if kind == .relationship { #expect(stored?.endA != nil && stored?.endB != nil, "\(recording.id): ends") }
            }
            applied += 1
        }
        #expect(applied >= 5, "entity and relationship events among the recordings: \(applied)")
    }
}
