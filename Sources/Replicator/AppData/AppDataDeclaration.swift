import Foundation
import PubNubWire
import ReplicaModel

/// The app's own DataSync classes a replica keeps offline, beside the chat's users, channels and
/// memberships (`docs/app-data.md`). Empty by default: a replica then ignores entity and
/// relationship records as it always did.
///
/// ```swift
/// var appData = AppDataDeclaration(classes: [
///     AppClass(entity: "Poll", properties: [AppProperty("closed", kind: .boolean)], routing: .wildcard(prefix: "poll")),
///     AppClass(relationship: "Vote", from: "Poll", to: "User"),
/// ])
/// try appData.validate()      // what a replica's start checks too
/// ```
public struct AppDataDeclaration: Sendable, Hashable, Codable {
    /// The classes, each name once.
    public var classes: [AppClass]

    /// A declaration of `classes`.
    public init(classes: [AppClass] = []) { self.classes = classes }

    /// The class named `name`, or nil.
    public func `class`(named name: String) -> AppClass? { classes.first { $0.name == name } }

    /// Checks every class against DataSync's rules and the replica's, throwing the first problem
    /// (``AppDataError/declaration(className:reason:)``): a class name DataSync refuses or used
    /// twice or a built-in's; versions not increasing from 1; more than
    /// ``AppClass/maxProperties`` properties, a property name or path used twice or empty; a sync
    /// rule on an undeclared property, with a value of another kind, a quote in a string, or more
    /// than 9 predicates (the 10th is the replica's `updatedAt`); a wildcard prefix that would not
    /// make valid ids; `.ends` routing on an entity class; a full listing more often than each minute.
    public func validate() throws(AppDataError) {
        var seen: Set<String> = []
        for type in classes {
            func refuse(_ reason: String) -> AppDataError { .declaration(className: type.name, reason: reason) }
            if let problem = DataSyncLimits.classNameProblem(type.name) { throw refuse(problem) }
            guard !Self.builtIns.contains(type.name) else { throw refuse("\(type.name) is a built-in class: the chat's objects replicate it") }
            guard seen.insert(type.name).inserted else { throw refuse("declared twice") }
            guard let first = type.versions.first, first >= 1, zip(type.versions, type.versions.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw refuse("versions must be whole numbers from 1, increasing")
            }
            if case .relationship(let a, let b) = type.kind {
                for end in [a, b] where DataSyncLimits.classNameProblem(end) != nil || end == "Membership" {
                    throw refuse("the end class \(end) is not an entity class name")
                }
            }
            try Self.checkProperties(type, refuse)
            try Self.checkRule(type, refuse)
            switch type.routing {
            case .idChannels: break
            case .wildcard(let prefix):
                if prefix.isEmpty || prefix.contains(".") || DataSyncIdentifier.problem(prefix + ".x") != nil || prefix.utf8.count > 200 {
                    throw refuse("a wildcard prefix is 1-200 characters an id may hold, without a dot")
                }
            case .ends:
                guard case .relationship = type.kind else { throw refuse(".ends routing is for relationship classes") }
            }
            guard type.fullListingInterval >= .seconds(60) else { throw refuse("a full listing at most once a minute") }
        }
    }

    /// The built-in classes, which the chat's objects replicate.
    static let builtIns: Set<String> = ["User", "Channel", "Membership"]

    static func checkProperties(_ type: AppClass, _ refuse: (String) -> AppDataError) throws(AppDataError) {
        guard type.properties.count <= AppClass.maxProperties else {
            throw refuse("at most \(AppClass.maxProperties) properties (each has a local index)")
        }
        var names: Set<String> = [], paths: Set<[String]> = []
        for property in type.properties {
            guard DataSyncLimits.classNameProblem(property.name) == nil, !["id", "status", "updatedAt", "createdAt"].contains(property.name) else {
                throw refuse("property \(property.name): a name is 1-128 letters, digits, _ or -, from a letter, and not a system field's")
            }
            guard !property.path.isEmpty, !property.path.contains(where: \.isEmpty) else { throw refuse("property \(property.name): an empty path") }
            guard names.insert(property.name).inserted, paths.insert(property.path).inserted else {
                throw refuse("property \(property.name): a name or a path used twice")
            }
        }
    }

    static func checkRule(_ type: AppClass, _ refuse: (String) -> AppDataError) throws(AppDataError) {
        guard case .matching(let predicates) = type.rule else { return }
        guard (1...9).contains(predicates.count) else { throw refuse("a sync rule has 1 to 9 predicates") }
        for predicate in predicates {
            let kind: DataSyncValueKind
            if predicate.property == "status" {
                kind = .string
            } else if let property = type.property(named: predicate.property) {
                kind = property.kind
            } else {
                throw refuse("the sync rule names \(predicate.property), which the class does not declare")
            }
            guard kind.accepts(predicate.value) else {
                throw refuse("the sync rule compares \(predicate.property) (a \(kind.rawValue)) with another kind of value")
            }
            if case .string(let text) = predicate.value, text.contains(where: { "\"'\\".contains($0) }) {
                throw refuse("the sync rule's value for \(predicate.property) holds a quote or a backslash")
            }
        }
    }
}

/// Why an app-data declaration, query or write was refused before anything was stored or sent.
public enum AppDataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A class of the declaration breaks a rule (``AppDataDeclaration/validate()``).
    case declaration(className: String, reason: String)
    /// A write names a class the replica does not declare (``ReconcilerOptions/appData``).
    case undeclaredClass(String)
    /// A write names a class version its class does not declare.
    case undeclaredVersion(className: String, version: Int)
    /// A write treats an entity class as a relationship class, or the reverse (`create` vs `link`).
    case wrongClassKind(className: String, expected: AppRecord.Kind)
    /// A declared property holds a value of another kind than its declaration (the server would
    /// refuse it: 400 `DS-0008`).
    case propertyKind(className: String, property: String, expected: DataSyncValueKind, found: JSONValue)
    /// A declared property that is not optional is missing or null (400 `DS-0650`).
    case missingProperty(className: String, property: String)
    /// The record's id, status or payload breaks DataSync's rules (`reason` says which).
    case invalidRecord(className: String, id: String, reason: String)
    /// An edit or delete of a record the store does not hold (read it first: a pull, or
    /// `replica.appData.create`).
    case recordNotFound(className: String, id: String)
    /// A create of an id the store already holds.
    case recordExists(className: String, id: String)
    /// A relationship's end is known deleted (its tombstone, or an unsent delete of it), or is
    /// stored as a record of another class than the relationship class declares.
    case invalidEnd(className: String, end: String, reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .declaration(let name, let reason): "app class \(name): \(reason)"
        case .undeclaredClass(let name): "app class \(name) is not declared (ReconcilerOptions.appData)"
        case .undeclaredVersion(let name, let version): "app class \(name) declares no version \(version)"
        case .wrongClassKind(let name, let expected):
            "app class \(name) is not \(expected == .entity ? "an entity" : "a relationship") class"
        case .propertyKind(let name, let property, let expected, let found):
            "\(name).\(property) must be a \(expected.rawValue), not \((try? found.jsonString()) ?? "?")"
        case .missingProperty(let name, let property): "\(name).\(property) is required"
        case .invalidRecord(let name, let id, let reason): "record \(name)/\(id): \(reason)"
        case .recordNotFound(let name, let id): "record \(name)/\(id) is not in the store"
        case .recordExists(let name, let id): "record \(name)/\(id) exists already"
        case .invalidEnd(let name, let end, let reason): "\(name) end \(end): \(reason)"
        }
    }
}
