import Foundation
import PubNubReplica

// A poll in a chat, kept offline with the app's own DataSync classes (docs/app-data.md): a `Poll`
// entity and a `Vote` relationship from a poll to the user who voted. Every call below works
// offline; the replica sends the writes when PubNub can be reached, and settles a conflict (one
// person closing the poll while another adds an option) by merging the two edits.

/// A poll, as the app's own type.
public struct Poll: Codable, Sendable, Equatable {
    /// The question.
    public var question: String
    /// The choices, in order.
    public var options: [String]
    /// Whether voting has ended.
    public var closed: Bool

    /// A poll.
    public init(question: String, options: [String], closed: Bool = false) {
        self.question = question
        self.options = options
        self.closed = closed
    }
}

/// The poll's classes and the calls the app makes.
public enum PollExample {
    /// `Poll` (its ids under `poll.`, so one wildcard subscription brings every poll's events) and
    /// `Vote`, from a poll to a user, its payload the chosen option's index.
    public static let classes = [
        AppClass(entity: "Poll", properties: [
            AppProperty("question", kind: .string), AppProperty("closed", kind: .boolean),
        ], routing: .wildcard(prefix: "poll")),
        AppClass(relationship: "Vote", from: "Poll", to: "User", properties: [AppProperty("choice", kind: .number)]),
    ]

    /// Declares the poll classes in an app's configuration (a changed declaration is a normal start).
    public static func declare(in configuration: inout ReplicaConfiguration) {
        configuration.reconciler.appData = AppDataDeclaration(classes: classes)
    }

    /// Creates a poll; returns its id (made on the device: `poll.<uuid>`).
    public static func create(_ poll: Poll, on replica: Replica<DefaultChatCustom>) async throws -> String {
        guard let record = try await replica.appData.create("Poll", poll).value else { throw AppDataError.undeclaredClass("Poll") }
        return record.id
    }

    /// The user's vote: one per user and poll, whatever the server's own uniqueness (its id
    /// names both).
    public static func vote(_ choice: Int, in poll: String, as user: String, on replica: Replica<DefaultChatCustom>) async throws {
        try await replica.appData.link("Vote", from: poll, to: user, id: "vote.\(poll).\(user)", ["choice": .int(Int64(choice))])
    }

    /// Adds an option to a poll.
    public static func addOption(_ option: String, to poll: String, on replica: Replica<DefaultChatCustom>) async throws {
        try await replica.appData.update("Poll", id: poll, as: Poll.self) { $0.options.append(option) }
    }

    /// Ends voting.
    public static func close(_ poll: String, on replica: Replica<DefaultChatCustom>) async throws {
        try await replica.appData.update("Poll", id: poll, as: Poll.self) { $0.closed = true }
    }

    /// The poll as shown, and its votes counted by option.
    public static func results(of poll: String, on replica: Replica<DefaultChatCustom>) async throws -> (poll: Poll, votes: [String: Int])? {
        guard let record = try await replica.fetch(AppRecordQueries.record(.entity, id: poll)) else { return nil }
        let shown = try record.decoded(as: Poll.self)
        let votes = try await replica.fetch(AppRecordQueries.records(AppRecordFilter("Vote", where: [AppRecordPredicate("endA", .equal, .string(poll))])))
        var counts: [String: Int] = [:]
        for vote in votes {
            guard case .int(let choice)? = vote.payload["choice"], shown.options.indices.contains(Int(choice)) else { continue }
            counts[shown.options[Int(choice)], default: 0] += 1
        }
        return (shown, counts)
    }
}
