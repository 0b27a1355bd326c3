/// The error codes the simulator's DataSync answers with: the one table of them, so that a code
/// PubNub turns out to send differently is changed here and nowhere else.
///
/// The captured answers disagree on some codes (`docs/datasync.md`, "Choices"): a stale `If-Match`
/// is a 412 with an empty body in the Dart SDK's stubs and a 412 `DS-0300` in the Kotlin SDK's; a
/// filter on a property that cannot be filtered is `DS-1001` in one and `DS-0005` in the reference.
/// ``DataSyncChoices/codes`` picks a table: the default, or ``kotlinStubs`` and ``dartStubs`` to
/// answer as those SDKs' tests expect. The client keys on the HTTP status and reads a code only
/// where the status alone is ambiguous (`DataSyncErrors` in PubNubWire), so each table must pass
/// the same client tests.
///
/// ```swift
/// var choices = DataSyncChoices()
/// choices.codes = .kotlinStubs      // a stale If-Match now answers 412 DS-0300
/// server.configureDataSync(choices)
/// ```
public struct DataSyncCodes: Sendable, Hashable {
    /// 404: no record, class or version of that name.
    public var notFound = "DS-0100"
    /// 400: a field of the request is invalid (an id, a status, a limit, a cursor...).
    public var invalid = "DS-0004"
    /// 400: a list filters or sorts on a property that is not declared filterable.
    public var unfilterable = "DS-0005"
    /// 400: a class named where another kind was expected (a user class that is not one).
    public var notSubclass = "DS-0006"
    /// 400: a declared property holds a value of another kind (PHP SDK's stub: `DS-0008`).
    public var wrongKind = "DS-0008"
    /// 400: a declared property that may not be null is missing (reference §14: `DS-0650`).
    public var requiredMissing = "DS-0650"
    /// 400: a `filter` or `filter_fast` expression that does not parse.
    public var filterSyntax = "DS-1001"
    /// 403: the keyset has no Access Manager, or the request sent a token and a signature.
    public var accessDenied = "DS-0201"
    /// 401: neither a token nor a signature.
    public var unauthenticated = "DS-0203"
    /// 409: a JSON Patch `test` failed.
    public var testFailed = "DS-0302"
    /// 409: a relationship would break its class's cardinality.
    public var cardinality = "DS-0801"
    /// 400: the body is not the JSON the endpoint takes.
    public var syntax = "SYN-0001"
    /// 400: a required field is null or missing.
    public var notNull = "SYN-0004"
    /// 400: a JSON Patch names a member that does not exist.
    public var missingMember = "SYN-0006"
    /// The code of a 412 (a stale `If-Match`): nil answers with an empty body.
    public var stale: String?
    /// The code of a 409 on a create whose id (or membership pair) exists: nil answers without one.
    public var duplicate: String?

    /// The default table: the reference's codes, a 412 and a duplicate 409 without a code.
    public init() {}

    /// As the Kotlin SDK's stubs answer: a stale `If-Match` is `DS-0300`, an unfilterable field `DS-1001`.
    public static var kotlinStubs: DataSyncCodes {
        var codes = DataSyncCodes()
        codes.stale = "DS-0300"
        codes.unfilterable = "DS-1001"
        return codes
    }

    /// As the Dart SDK's stubs answer: a stale `If-Match` is a 412 with an empty body.
    public static var dartStubs: DataSyncCodes {
        var codes = DataSyncCodes()
        codes.stale = nil
        return codes
    }
}
