import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// Fields `user set` and `channel set` share.
struct ObjectFieldOptions: ParsableArguments {
    @Option(name: .long, help: "The object's id.") var id: String
    @Option(name: .long, help: "Name (an empty string clears it).") var name: String?
    @Option(name: .long, help: "Status (an empty string clears it).") var status: String?
    @Option(name: .long, help: "Type.") var type: String?
    @Option(name: .long, help: "Custom data, a flat JSON object (replaces the whole object).") var custom: String?

    /// The edit these options make of a user or channel (name, status, type, custom), with the
    /// command's own fields (`adding`: a user's email, a channel's description, by wire name; an
    /// empty string clears a field, nil leaves it). The fields are named on the wire: generic code
    /// cannot name an entity's properties by key path.
    func edit<Entity: ReplicatedEntity>(of _: Entity.Type, adding own: [String: String?] = [:]) throws -> FieldChanges<Entity>
    where Entity.CustomFields == FlatCustom {
        var wire: [String: JSONValue] = [:]
        for (field, value) in [("name", name), ("status", status), ("type", type)] + own.map({ ($0.key, $0.value) }) {
            if let value { wire[field] = value.isEmpty ? .null : .string(value) }
        }
        var edit = try FieldChanges<Entity>(wireFields: wire)
        if let custom = try parseCustom(custom) { edit.custom = .set(custom) }
        return edit
    }
}
