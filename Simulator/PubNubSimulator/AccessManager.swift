import Foundation
import PubNubWire
import ReplicaModel

/// The simulator's Access Manager v3 (reference §2): on when ``PubNubServer`` has a secret key.
///
/// It sees every request before the server routes it (``intercept(_:now:)``) and lets it through
/// or answers it:
///
/// 1. **Grant and revoke** (`POST /v3/pam/{sub}/grant`, `DELETE /v3/pam/{sub}/grant/{token}`)
///    need the request signature (``AccessSignature``). A grant mints a token
///    (``MintedToken/text(secretKey:)``) kept by its text; a revoke marks it revoked.
/// 2. **A signed request** is an admin's (the Python SDK signs every request when it holds the
///    secret key): a valid signature lets it do anything, an invalid one gets 403.
/// 3. **Everything else** needs what ``PubNubWire/AccessNeed/of(_:)`` says (the one permission
///    table, shared with the client's pre-check) from the token in `auth`: a token this server
///    minted, not revoked, not expired on the server's clock, whose authorized user (if any) is
///    the request's `uuid`. `/time`, where-now, leave and the presigned storage requests need
///    nothing.
///
/// Refusals carry the exact 403 of the endpoint's family (``AccessReply``).
struct AccessManager: Sendable {
    /// The secret key: signatures and token MACs.
    let secretKey: String
    let publishKey: String
    let subscribeKey: String
    /// Every token minted, by its text.
    private(set) var tokens: [String: MintedToken] = [:]

    init(secretKey: String, publishKey: String, subscribeKey: String) {
        self.secretKey = secretKey
        self.publishKey = publishKey
        self.subscribeKey = subscribeKey
    }

    /// Mints a token for `grant`, issued at `now` (whole seconds).
    mutating func mint(_ grant: TokenGrant, now: Date) throws(AccessGrantError) -> String {
        guard TokenGrant.ttlRange.contains(grant.ttlMinutes) else { throw .invalidTTL }
        // Whole seconds; a clock before 1970, past the year 5138 or not a number is clamped
        // rather than trapping (the server's timetokens are clamped the same way).
        let seconds = now.timeIntervalSince1970
        let issued = seconds.isFinite ? Int64(min(max(seconds, 0), 1e11).rounded(.down)) : 0
        let token = MintedToken(grant: grant, issued: issued)
        let text = token.text(secretKey: secretKey)
        // The same grant in the same second mints the same text: it stays one token (a revoke
        // of either revokes both, as they cannot be told apart).
        if tokens[text] == nil { tokens[text] = token }
        return text
    }

    /// Revokes `text`; a token never minted here or already expired is refused.
    mutating func revoke(_ text: String, now: Date) -> WireResponse {
        guard let token = tokens[text] else { return AccessReply.revokeUnknown }
        guard token.revoked || !token.isExpired(at: now) else { return AccessReply.revokeExpired }
        tokens[text]?.revoked = true
        return AccessReply.revokedNow
    }

    /// The answer to `request` when Access Manager answers it (a grant, a revoke, a refusal);
    /// nil lets the server serve it.
    mutating func intercept(_ request: WireRequest, now: Date) -> WireResponse? {
        let s = request.pathSegments
        if s.count >= 4, s[0] == "v3", s[1] == "pam", s[3] == "grant" {
            return tokenEndpoint(request, now: now)
        }
        if request.queryValue("signature") != nil {
            return verified(request) ? nil : AccessReply.invalidSignature
        }
        if s.first == FileStorage.pathPrefix { return nil }
        let need = AccessNeed.of(request)
        if need == .nothing { return nil }
        let family = AccessReply.Family.of(request)
        let everything = need.missing(in: AccessGrants())
        guard let text = request.queryValue("auth"), let token = tokens[text] else {
            return AccessReply.denied(family, refused: everything)
        }
        if token.revoked { return AccessReply.revoked }
        if token.isExpired(at: now) { return AccessReply.expired }
        if let user = token.grant.authorizedUserId, user != request.queryValue("uuid") {
            return AccessReply.denied(family, refused: everything)
        }
        if need == .secretKey { return AccessReply.denied(family, refused: everything) }
        // A pattern the client will not evaluate is not evaluated here either: it grants nothing
        // (docs/simulator.md, "Access Manager").
        let missing = need.missing(in: token.grant.grants, undecidedIsMet: false)
        return missing.isEmpty ? nil : AccessReply.denied(family, refused: missing)
    }

    /// `POST /v3/pam/{sub}/grant` and `DELETE /v3/pam/{sub}/grant/{token}`, signed.
    private mutating func tokenEndpoint(_ request: WireRequest, now: Date) -> WireResponse {
        let s = request.pathSegments
        guard s[2] == subscribeKey else { return AccessReply.wrongSubscribeKey }
        guard verified(request) else { return AccessReply.invalidSignature }
        switch (request.method, s.count) {
        case (.post, 4):
            guard let body = Reply.bodyJSON(request) else {
                return AccessReply.grantRefused(.invalidBody(message: "Not JSON", location: "body"))
            }
            do {
                return AccessReply.granted(try mint(TokenGrant(body: body), now: now))
            } catch {
                return AccessReply.grantRefused(error)
            }
        case (.delete, 5):
            return revoke(s[4], now: now)
        default:
            return Reply.notFound()
        }
    }

    private func verified(_ request: WireRequest) -> Bool {
        AccessSignature.verify(request, publishKey: publishKey, subscribeKey: subscribeKey, secretKey: secretKey)
    }
}
