import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate token ...`: Access Manager tokens.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Read Access Manager tokens.", subcommands: [Show.self])

    /// `pnreplicate token show`.
    struct Show: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Parse the token and print what it grants (never its signature); nothing is sent.",
            discussion: """
                The token is --auth-token (alias --auth-key), else the content of --auth-token-file, \
                else $PUBNUB_AUTH_TOKEN, else $PUBNUB_AUTH_KEY. With --json the output has the keys \
                of the Python SDK's parse_token (version, timestamp, ttl, authorized_uuid, resources, \
                patterns, meta; categories when the token has some), each permission as booleans. \
                Exit status 1 when the text is not a token.
                """)

        @Option(
            name: [.customLong("auth-token"), .customLong("auth-key")],
            help: ArgumentHelp("The token (default: $PUBNUB_AUTH_TOKEN, else $PUBNUB_AUTH_KEY).", valueName: "token"))
        var authToken: String?

        @Option(help: ArgumentHelp("Read the token from this file.", valueName: "path"))
        var authTokenFile: String?

        @Flag(name: .long, help: "Print JSON (parse_token's keys).")
        var json = false

        func validate() throws {
            if authToken != nil, authTokenFile != nil {
                throw ValidationError("give the token with --auth-token or --auth-token-file, not both")
            }
        }

        func perform() async throws {
            let text: String
            if let authToken {
                text = authToken
            } else if let authTokenFile {
                text = try ConnectionOptions.readToken(file: authTokenFile)
            } else if let value = environmentValue("PUBNUB_AUTH_TOKEN") ?? environmentValue("PUBNUB_AUTH_KEY") {
                text = value
            } else {
                throw ValidationError("no token: give --auth-token, --auth-token-file or PUBNUB_AUTH_TOKEN")
            }
            let token = try AccessToken(parsing: text)
            if json {
                try Output.json(token.parsedJSON)
            } else {
                Output.table(Self.rows(token, now: Date()))
            }
        }

        static func rows(_ token: AccessToken, now: Date) -> [(String, String)] {
            let state = token.isExpired(at: now) ? "expired" : "valid for \(Int(token.expires.timeIntervalSince(now)))s"
            var rows: [(String, String)] = [
                ("version", "\(token.version)"), ("issued", "\(ISOTimestamp(date: token.issued))"),
                ("ttl", "\(token.ttlMinutes) min"), ("expires", "\(ISOTimestamp(date: token.expires)) (\(state))"),
                ("authorized user", token.authorizedUserId.map(Output.terminalSafe) ?? "any"),
            ]
            let kinds: [(AccessResourceKind, String)] = [(.channel, "channel"), (.group, "group"), (.uuid, "user")]
            for (section, map) in [("", token.grants.resources), ("pattern ", token.grants.patterns)] {
                for (kind, name) in kinds {
                    for (resource, bits) in (map[kind] ?? [:]).sorted(by: { $0.key < $1.key }) {
                        rows.append(("\(section)\(name) \(Output.terminalSafe(resource))", "\(bits)"))
                    }
                }
            }
            for (kind, name) in kinds { if let bits = token.grants.categories[kind] { rows.append(("every \(name)", "\(bits)")) } }
            if token.meta != .object([:]), let meta = try? token.meta.jsonString() { rows.append(("meta", Output.terminalSafe(meta))) }
            return rows
        }
    }
}
