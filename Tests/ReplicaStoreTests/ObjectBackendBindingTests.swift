import Foundation
import GRDB
import Testing
@testable import ReplicaStore

/// A store is bound to the object backend it was first filled from (migration 0012,
/// `docs/datasync.md`, "Binding a store to a backend").
@Suite("A store keeps its object backend")
struct ObjectBackendBindingTests {
    @Test("the first replica binds a new store; the same backend opens it again, the other is refused and nothing changes")
    func bind() throws {
        let path = Fixture.temporaryPath()
        let store = try Store.open(at: path)
        #expect(try store.objectBackend() == nil)
        try store.bindObjectBackend("datasync")
        try store.bindObjectBackend("datasync")
        #expect(throws: StoreError.objectBackendMismatch(stored: "datasync", configured: "app-context")) {
            try store.bindObjectBackend("app-context")
        }
        #expect(try Store.open(at: path).objectBackend() == "datasync")
        #expect(StoreError.objectBackendMismatch(stored: "datasync", configured: "app-context").description.contains("datasync"))
    }

    @Test("migrating a store that holds a server's object binds it to App Context; one that holds none stays unbound")
    func backfill() throws {
        let before = try Migration.bundled().filter { $0.name < "0012" }
        var options = StoreOptions()
        options.migrations = before
        let filled = Fixture.temporaryPath(), empty = Fixture.temporaryPath()
        let old = try Store.open(at: filled, options: options)
        try old.writer.write { try $0.execute(sql: "INSERT INTO users (id, name, etag) VALUES ('u1', 'A', 'e1')") }
        _ = try Store.open(at: empty, options: options)
        #expect(try Store.open(at: filled).objectBackend() == "app-context")
        #expect(try Store.open(at: empty).objectBackend() == nil)
    }
}
