import Foundation

/// The SQL migration files of this build, read from the bundled resources.
///
/// Each file is named `NNNN_name.sql`; the runner in `ReplicaStore` applies them in order.
public enum ReplicaMigrations {
    /// One bundled migration file.
    public struct File: Sendable, Hashable {
        /// The file name without `.sql`, e.g. `0001_initial`.
        public let name: String
        /// The SQL text, exactly as shipped.
        public let sql: String
    }

    /// Every bundled migration, sorted by name.
    public static func files() throws -> [File] {
        guard let directory = Bundle.module.resourceURL else { return [] }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }
            .sorted()
        return try names.map { fileName in
            let url = directory.appendingPathComponent(fileName)
            let sql = try String(contentsOf: url, encoding: .utf8)
            return File(name: String(fileName.dropLast(4)), sql: sql)
        }
    }
}
