import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// Fields `user set` and `channel set` share.
struct ObjectFieldOptions: ParsableArguments {
    @Option(name: .long, help: "The object's id.") var id: String
    @Option(name: .long, help: "Name (an empty string clears it).") var name: String?
    @Option(name: .long, help: "Status (an empty string clears it).") var status: String?
    @Option(name: .long, help: "Type.") var type: String?
    @Option(name: .long, help: "Custom data, a flat JSON object (replaces the whole object).") var custom: String?

    static func update(_ value: String?) -> FieldUpdate<String> {
        guard let value else { return .unchanged }
        return .set(value.isEmpty ? nil : value)
    }
}
