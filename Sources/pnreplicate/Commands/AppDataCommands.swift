import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `--app-classes FILE`: the command line's own short form of an app's classes (docs/app-data.md):
/// a JSON array of `{"entity": NAME, "properties": {NAME: KIND | {"path": "a/b", "kind": KIND,
/// "optional": BOOL}}, "versions": [1], "wildcard": PREFIX, "where": {PROPERTY: VALUE}}` or
/// `{"relationship": NAME, "from": CLASS, "to": CLASS, ...}`. A property given by its kind alone
/// is required; `where` keeps the records whose properties equal the values (the sync rule).
enum AppClassesFile {
    /// The classes in `path`; anything it cannot read is a usage error naming the entry.
    static func read(_ path: String) throws -> [AppClass] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--app-classes \(path): cannot read the file")
        }
        guard let items = JSONValue.parse(data)?.arrayValue else {
            throw ValidationError("--app-classes \(path): not a JSON array of classes")
        }
        let classes = try items.enumerated().map { index, item in
            do {
                return try parse(item)
            } catch let error as ValidationError {
                throw ValidationError("--app-classes \(path), class \(index + 1): \(error.message)")
            }
        }
        do {
            try AppDataDeclaration(classes: classes).validate()
        } catch {
            throw ValidationError("--app-classes \(path): \(error)")
        }
        return classes
    }

    static func parse(_ item: JSONValue) throws -> AppClass {
        guard let object = item.objectValue else { throw ValidationError("not an object") }
        var properties: [AppProperty] = []
        for (name, spec) in (object["properties"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let kindText = spec.stringValue ?? spec.objectValue?["kind"]?.stringValue ?? ""
            guard let kind = DataSyncValueKind(rawValue: kindText) else {
                throw ValidationError("property \(name): kind \(kindText.isEmpty ? "missing" : kindText) (string, number, boolean, date, datetime)")
            }
            let path = spec.objectValue?["path"]?.stringValue.map { $0.split(separator: "/").map(String.init) }
            properties.append(AppProperty(name, at: path, kind: kind, isOptional: spec.objectValue?["optional"] == .bool(true)))
        }
        let versions = object["versions"]?.arrayValue?.compactMap { value -> Int? in
            if case .int(let number) = value { return Int(number) }
            return nil
        } ?? [1]
        let rule: AppSyncRule = (object["where"]?.objectValue).map { conditions in
            .matching(conditions.sorted { $0.key < $1.key }.map { AppPredicate($0.key, .equal, $0.value) })
        } ?? .all
        let routing: AppEventRouting? = object["wildcard"]?.stringValue.map { .wildcard(prefix: $0) }
        if let name = object["entity"]?.stringValue {
            return AppClass(entity: name, versions: versions, properties: properties, rule: rule, routing: routing ?? .idChannels)
        }
        if let name = object["relationship"]?.stringValue, let from = object["from"]?.stringValue, let to = object["to"]?.stringValue {
            return AppClass(relationship: name, from: from, to: to, versions: versions, properties: properties, rule: rule, routing: routing ?? .ends)
        }
        throw ValidationError("needs \"entity\": NAME, or \"relationship\": NAME with \"from\" and \"to\"")
    }
}

/// `pnreplicate entity` and `pnreplicate relationship`: the records of an app's own DataSync
/// classes, read from the store and written offline through the outbox (`sync --app-classes FILE`
/// pulls them and sends the writes; `sync --dry-run` shows each write's exact request).
struct AppRecordCommand<Kind: AppRecordKindName>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Kind.kind == .entity ? "entity" : "relationship",
            abstract: "The records of an app's own DataSync \(Kind.kind == .entity ? "entity" : "relationship") class: read, or written offline.",
            discussion: """
                Pulled by `sync` with --app-classes FILE (docs/app-data.md). A write is checked against \
                the class first (exit 64, nothing stored), queued, and sent by the next `sync`. \
                --dry-run on a write prints the exact request it would queue (a PATCH's JSON Patch \
                body and If-Match) and keeps nothing; `pnreplicate sync --dry-run` prints every \
                queued write's.
                """,
            subcommands: [
                AppRecordList<Kind>.self, AppRecordGet<Kind>.self, AppRecordCreate<Kind>.self, AppRecordPatch<Kind>.self,
                AppRecordReplace<Kind>.self, AppRecordDelete<Kind>.self,
            ])
    }
}

/// A JSON value given on the command line: JSON, or else the text as a string.
func commandLineJSON(_ text: String) -> JSONValue { JSONValue.parse(Data(text.utf8)) ?? .string(text) }

/// `--payload JSON`: a JSON object, or a usage error.
func payloadObject(_ text: String) throws -> [String: JSONValue] {
    guard let object = JSONValue.parse(Data(text.utf8))?.objectValue else { throw ValidationError("--payload must be a JSON object") }
    return object
}

/// A payload path given as `a/b` (or `/payload/a/b`), as its member names.
func payloadPath(_ text: String) throws -> [String] {
    var path = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    if text.hasPrefix("/payload/") { path.removeFirst() }
    guard !path.isEmpty else { throw ValidationError("\(text): name a payload member (a/b)") }
    return path
}

/// `entity create --class C --payload JSON`: a new record, queued.
struct AppRecordCreate<Kind: AppRecordKindName>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "create",
            abstract: Kind.kind == .entity ? "Create an entity (POST), offline." : "Link two entities (POST a relationship), offline.")
    }
    @OptionGroup var options: SessionOptions
    @OptionGroup var rehearsal: DryRunFlag
    @Option(name: .customLong("class"), help: "The class.") var className: String
    @Option(help: "The id (default: one made here, <prefix>.<uuid> under a wildcard class).") var id: String?
    @Option(help: "The payload, a JSON object.") var payload = "{}"
    @Option(help: "The status (1-100 characters).") var status: String?
    @Option(help: "The first end's id (relationships).") var a: String?
    @Option(help: "The second end's id (relationships).") var b: String?

    func perform() async throws {
        let payload = try payloadObject(payload)
        if Kind.kind == .relationship {
            guard let a, let b else { throw ValidationError("a relationship needs --a and --b") }
            try await Session.enqueue(options, dryRun: rehearsal.dryRun, id: { $0.value?.id }) {
                try await $0.appData.link(className, from: a, to: b, id: id, payload)
            }
        } else {
            try await Session.enqueue(options, dryRun: rehearsal.dryRun, id: { $0.value?.id }) {
                try await $0.appData.create(className, payload, id: id, status: status)
            }
        }
    }
}

/// `entity patch --class C --id ID --set a/b=JSON --remove c`: an edit of a stored record,
/// queued as the JSON Patch of what changed.
struct AppRecordPatch<Kind: AppRecordKindName>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "patch", abstract: "Edit a stored record (a JSON Patch with If-Match), offline.")
    }
    @OptionGroup var options: SessionOptions
    @OptionGroup var rehearsal: DryRunFlag
    @Option(name: .customLong("class"), help: "The class.") var className: String
    @Option(help: "The record's id.") var id: String
    @Option(name: .customLong("set"), help: ArgumentHelp("PATH=JSON: a payload member's new value (repeatable).", valueName: "change"))
    var sets: [String] = []
    @Option(name: .customLong("remove"), help: ArgumentHelp("PATH: a payload member removed (repeatable).", valueName: "path"))
    var removals: [String] = []
    @Option(help: "The new status.") var status: String?
    @Option(help: "Upgrade to this class version.") var version: Int?

    func perform() async throws {
        var changes: [JSONChange] = try sets.map { text in
            guard let equals = text.firstIndex(of: "=") else { throw ValidationError("--set \(text): give PATH=JSON") }
            return JSONChange(path: try payloadPath(String(text[..<equals])), edit: .set(commandLineJSON(String(text[text.index(after: equals)...]))))
        }
        changes += try removals.map { JSONChange(path: try payloadPath($0), edit: .remove) }
        guard !changes.isEmpty || status != nil || version != nil else {
            throw ValidationError("give what changes: --set, --remove, --status or --version")
        }
        let (status, version, edits) = (status, version, changes)
        try await Session.enqueue(options, dryRun: rehearsal.dryRun, id: { _ in id }) {
            try await $0.appData.update(className, id: id, kind: Kind.kind) { record in
                record.payload = JSONDiff.apply(edits, to: record.payload)
                if let status { record.status = status }
                if let version { record.classVersion = version }
            }
        }
    }
}

/// `entity replace --class C --id ID --payload JSON`: a stored record's payload replaced whole.
struct AppRecordReplace<Kind: AppRecordKindName>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "replace", abstract: "Replace a stored record's payload whole (PUT with If-Match), offline.")
    }
    @OptionGroup var options: SessionOptions
    @OptionGroup var rehearsal: DryRunFlag
    @Option(name: .customLong("class"), help: "The class.") var className: String
    @Option(help: "The record's id.") var id: String
    @Option(help: "The payload, a JSON object.") var payload: String
    @Option(help: "The status (none: removed).") var status: String?

    func perform() async throws {
        let payload = try payloadObject(payload)
        try await Session.enqueue(options, dryRun: rehearsal.dryRun, id: { _ in id }) {
            try await $0.appData.replace(className, id: id, kind: Kind.kind, status: status, payload: payload)
        }
    }
}

/// `entity delete --class C --id ID`: a stored record deleted, offline.
struct AppRecordDelete<Kind: AppRecordKindName>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "delete", abstract: "Delete a stored record (DELETE with If-Match), offline.")
    }
    @OptionGroup var options: SessionOptions
    @OptionGroup var rehearsal: DryRunFlag
    @Option(name: .customLong("class"), help: "The class.") var className: String
    @Option(help: "The record's id.") var id: String

    func perform() async throws {
        try await Session.enqueue(options, dryRun: rehearsal.dryRun, id: { _ in id }) { try await $0.appData.delete(className, id: id, kind: Kind.kind) }
    }
}

/// `--dry-run` of a write command: check the write, keep nothing, print the request it would send.
struct DryRunFlag: ParsableArguments {
    @Flag(name: .long, help: "Check the write and print the exact request it would queue (a PATCH's JSON Patch, If-Match); store nothing, send nothing.")
    var dryRun = false
}

/// Names the record kind a command lists.
protocol AppRecordKindName { static var kind: AppRecord.Kind { get } }
/// `entity`.
enum EntityRecords: AppRecordKindName { static let kind = AppRecord.Kind.entity }
/// `relationship`.
enum RelationshipRecords: AppRecordKindName { static let kind = AppRecord.Kind.relationship }

/// `entity list --class C`: the class's records, filtered on its declared properties.
struct AppRecordList<Kind: AppRecordKindName>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "list", abstract: "The stored records of a class, newest change first.")
    }
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .customLong("class"), help: "The class.") var className: String
    @Option(name: .customLong("where"), help: ArgumentHelp(
        "PROPERTY=JSON: only records whose property equals the value (repeatable; a value that is not JSON is a string).",
        valueName: "condition")) var conditions: [String] = []
    @Option(help: ArgumentHelp("PROPERTY[:desc]: the order.", valueName: "property")) var sort: String?
    @Option(help: "Records whose first end is this id (relationships).") var a: String?
    @Option(help: "Records whose second end is this id (relationships).") var b: String?
    @Option(help: "At most this many (default 100).") var limit = 100

    func perform() async throws {
        var predicates = try conditions.map { condition -> AppRecordPredicate in
            guard let equals = condition.firstIndex(of: "=") else { throw ValidationError("--where \(condition): give PROPERTY=VALUE") }
            let text = String(condition[condition.index(after: equals)...])
            return AppRecordPredicate(String(condition[..<equals]), .equal, JSONValue.parse(Data(text.utf8)) ?? .string(text))
        }
        if let a { predicates.append(AppRecordPredicate("endA", .equal, .string(a))) }
        if let b { predicates.append(AppRecordPredicate("endB", .equal, .string(b))) }
        let order = sort.map { text in
            text.hasSuffix(":desc") ? AppRecordSort(String(text.dropLast(5)), descending: true) : AppRecordSort(text)
        }
        let replica = try options.openForReading()
        let records = try await replica.fetch(AppRecordQueries.records(AppRecordFilter(className, where: predicates, sortedBy: order, limit: limit)))
            .filter { $0.kind == Kind.kind }
        if options.json { return try Output.json(records.map(AppRecordOutput.init)) }
        Output.columns(
            Kind.kind == .entity ? ["ID", "VERSION", "UPDATED", "PAYLOAD"] : ["ID", "A", "B", "UPDATED", "PAYLOAD"],
            records.map { record in
                let payload = Output.oneLine((try? JSONValue.object(record.payload).jsonString()) ?? "{}")
                let updated = record.updatedAt?.description ?? "-"
                return Kind.kind == .entity ? [record.id, String(record.classVersion), updated, payload]
                    : [record.id, record.endA ?? "-", record.endB ?? "-", updated, payload]
            },
            empty: "no \(className) records in the store")
    }
}

/// `entity get --class C ID`: one stored record, whole.
struct AppRecordGet<Kind: AppRecordKindName>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "get", abstract: "One stored record, with every field.")
    }
    @OptionGroup var options: StoreOptionsGroup
    @Argument(help: "The record's id.") var id: String

    func perform() async throws {
        let replica = try options.openForReading()
        guard let record = try await replica.fetch(AppRecordQueries.record(Kind.kind, id: id)) else {
            throw ValidationError("no \(Kind.kind == .entity ? "entity" : "relationship") \(id) in the store")
        }
        try Output.json(AppRecordOutput(record))
    }
}

/// A record as `--json` prints it: DataSync's own field names.
struct AppRecordOutput: Encodable {
    var id: String
    var className: String
    var classVersion: Int
    var status: String?
    var payload: JSONValue
    var eTag: String?
    var createdAt: String?
    var updatedAt: String?
    var expiresAt: String?
    var entityAId: String?
    var entityBId: String?

    init(_ record: AppRecord) {
        id = record.id
        className = record.className
        classVersion = record.classVersion
        status = record.status
        payload = .object(record.payload)
        eTag = record.eTag
        createdAt = record.createdAt?.description
        updatedAt = record.updatedAt?.description
        expiresAt = record.expiresAt?.description
        entityAId = record.endA
        entityBId = record.endB
    }
}
