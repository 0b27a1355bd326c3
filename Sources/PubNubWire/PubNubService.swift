import Foundation
import Logging
import ReplicaModel

/// One of PubNub's APIs through a client: a value over the ``PubNubClient`` whose keys, origin,
/// transport, token and crypto module it uses (``PubNubClient/appContext``,
/// ``PubNubClient/history``, ``PubNubClient/messageActions``, ``PubNubClient/presence``,
/// ``PubNubClient/files``, ``PubNubClient/push``, ``PubNubClient/dataSync``).
///
/// ```swift
/// let page = try await client.history.fetchHistory(HistoryQuery(channels: ["general"], max: 25))
/// ```
public protocol PubNubService: Sendable {
    /// The client whose keys, origin, transport, token and crypto module are used.
    var client: PubNubClient { get }
}

extension PubNubService {
    var configuration: PubNubConfiguration { client.configuration }
    var crypto: CryptoModule? { client.crypto }
    var access: AccessControl { client.access }
    var transport: any Transport { client.transport }
    var logger: Logger { client.logger }

    func commonQuery(auth: Bool = true) -> [QueryItem] { client.commonQuery(auth: auth) }

    func perform(_ request: WireRequest) async throws(WireError) -> WireResponse {
        try await client.perform(request)
    }

    func perform<T: Decodable>(_ request: WireRequest, as type: T.Type) async throws(WireError) -> T {
        try await client.perform(request, as: type)
    }
}
