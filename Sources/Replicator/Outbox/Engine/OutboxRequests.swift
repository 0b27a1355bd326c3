import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Turns an outbox op into the exact request it sends. The drain engine and the dry run both use
/// this, so what `pnreplicate --dry-run` prints is what goes on the wire.
enum OutboxRequests {
    /// What an op needs that may only be known at send time.
    struct Resolved {
        /// A reaction's message timetoken (the parent publish may have finished after enqueue).
        var messageTimetoken: Timetoken?
        /// A removal's action timetoken.
        var actionTimetoken: Timetoken?
        /// The `If-Match` eTag (a rebased conflict uses the server's current one).
        var ifMatch: String?
        /// A send's files once uploaded (their server ids), in order.
        var files: [ChatFile]?
        /// The server's mute list read just before a mute list write (nil: not read; the op's own
        /// list is sent, as the dry run shows it).
        var serverMuted: [String]?
        /// A batch of read positions' set entries, planned from the server's memberships read
        /// just before (``ReadPositionsWrite/plan(_:objects:now:)``).
        var membershipSets: [ObjectWrite.MembershipFields]?
    }

    enum Problem: Error, CustomStringConvertible {
        case missing(String)
        case wire(WireError)

        var description: String {
            switch self {
            case .missing(let what): "not known yet: \(what)"
            case .wire(let error): error.description
            }
        }
    }

    static func request(for entry: OutboxEntry, resolved: Resolved, client: PubNubClient, objects: any ObjectBackend)
        throws(Problem) -> WireRequest
    {
        guard let write = try objectWrite(for: entry, resolved: resolved, objects: objects) else {
            return try request(for: entry, resolved: resolved, client: client)
        }
        do {
            return try objects.plannedRequest(for: write)
        } catch {
            throw .wire(error)
        }
    }

    /// The request of an op that is not an object write (``objectWrite(for:resolved:objects:)`` is nil).
    static func request(for entry: OutboxEntry, resolved: Resolved, client: PubNubClient) throws(Problem) -> WireRequest {
        func need<T>(_ value: T?, _ what: String) throws(Problem) -> T {
            guard let value else { throw .missing(what) }
            return value
        }
        do {
            switch entry.operation {
            case .send(let send):
                let (channel, message, meta, customMessageType) = (send.channel, send.message, send.meta, send.customMessageType)
                guard let shape = send.files else {
                    return try client.publishRequest(
                        PublishRequest(channel: channel, message: message, meta: meta, customMessageType: customMessageType))
                }
                let files = try need(resolved.files, "the files' uploads")
                switch shape {
                case .fileMessage:
                    let file = try need(files.first, "the file")
                    return try client.files.publishFileRequest(PublishFileRequest(
                        channel: channel, fileId: try need(file.id, "the file's id"), fileName: file.name, size: file.size,
                        mimeType: file.mimeType, message: message, store: true, meta: meta, customMessageType: customMessageType))
                case .chatText:
                    // The Chat SDK's text message lists the files it sent, with their locations.
                    var body = message.objectValue ?? [:]
                    body["files"] = .array(files.map(\.chatSDKValue))
                    return try client.publishRequest(
                        PublishRequest(channel: channel, message: .object(body), meta: meta, customMessageType: customMessageType))
                }
            case .addReaction(let reaction):
                return try client.messageActions.addMessageActionRequest(
                    channel: reaction.channel,
                    messageTimetoken: try need(resolved.messageTimetoken, "the message's timetoken"),
                    type: reaction.type, value: reaction.value)
            case .removeReaction(let reaction, _):
                return client.messageActions.removeMessageActionRequest(
                    channel: reaction.channel,
                    messageTimetoken: try need(resolved.messageTimetoken, "the message's timetoken"),
                    actionTimetoken: try need(resolved.actionTimetoken, "the action's timetoken"))
            case .mention(let notice):
                // The op id in meta lets a probe find an event that may have arrived.
                var event = ChatSDKFormat.mentionEvent(
                    messageTimetoken: try need(resolved.messageTimetoken, "the message's timetoken"),
                    channel: notice.channel, parentChannel: notice.parentChannel)
                if case .object(let keys)? = notice.push, case .object(var body) = event {
                    body.merge(keys) { own, _ in own }
                    event = .object(body)
                }
                return try client.publishRequest(
                    PublishRequest(channel: notice.user, message: event, meta: ["pnr_op": .string(entry.id)]))
            case .report(let channel, _, let body):
                // The op id in meta lets a probe find a report that may have arrived.
                return try client.publishRequest(
                    PublishRequest(
                        channel: ChatModeration.moderationChannel(for: channel), message: body, meta: ["pnr_op": .string(entry.id)]))
            case .invite(let notice):
                // The op id in meta lets a probe find an invitation that may have arrived.
                return try client.publishRequest(
                    PublishRequest(channel: notice.user, message: notice.body, meta: ["pnr_op": .string(entry.id)]))
            case .push(let registration):
                let device = try Self.device(registration)
                switch registration.change {
                case .add(let channels): return try client.push.addChannelsRequest(channels, device: device)
                case .remove(let channels): return try client.push.removeChannelsRequest(channels, device: device)
                case .removeDevice: return client.push.removeDeviceRequest(device)
                }
            case .hardDelete(let channel, _, let timetoken, _):
                // One message: `end` inclusive, `start` exclusive.
                return client.history.deleteMessagesRequest(
                    channel: channel, start: Timetoken(rawValue: timetoken.rawValue &+ 1), end: timetoken)
            case .receipt(let channel, let timetoken):
                return try client.signalRequest(
                    SignalRequest(channel: channel, message: ChatSDKFormat.receiptSignal(messageTimetoken: timetoken)))
            case .setAppRecord, .removeAppRecord:
                // Computed against the op's base: its snapshot's state and its eTag.
                let base = entry.baseSnapshot.flatMap { JSONValue.parse(text: $0)?.objectValue }
                return try DataSyncAppRecordWrites.request(
                    for: entry.operation, baseState: base.flatMap { ThreeWayMerge.normalize(.object($0), entity: .record) },
                    ifMatch: resolved.ifMatch, client: client)
            case .setMembership, .removeMembership, .setUser, .removeUser, .setChannel, .removeChannel, .setMuteList, .readPositions:
                throw Problem.missing("an object write (\(entry.kind)) goes to the object backend")
            }
        } catch let error as WireError {
            throw .wire(error)
        } catch let problem as Problem {
            throw problem
        } catch {
            throw .missing("\(error)")
        }
    }
}

extension OutboxRequests {
    /// The object write an op makes, in the seam's terms (nil: the op is not an object write).
    /// The precondition comes from the op's base: its eTag, or none when the server's object was
    /// never read; a create-only op (``OutboxKeys/createOnlyBase``) is `mustNotExist` only for a
    /// backend that checks it itself (otherwise the outbox read first, and it is sent as an upsert).
    static func objectWrite(for entry: OutboxEntry, resolved: Resolved, objects: any ObjectBackend) throws(Problem) -> ObjectWrite? {
        let precondition: ObjectPrecondition
        switch resolved.ifMatch {
        case OutboxKeys.createOnlyBase?: precondition = objects.capabilities.nativeCreateOnly ? .mustNotExist : .none
        case let eTag?: precondition = .ifMatch(eTag)
        case nil: precondition = .none
        }
        switch entry.operation {
        case .setMembership(let channel, let user, let fields):
            let base = entry.baseSnapshot.flatMap { try? JSONValue(jsonData: Data($0.utf8)).objectValue }
            return .setMembership(channel: channel, user: user, fields: fields, base: base, precondition: precondition)
        case .removeMembership(let channel, let user):
            return .removeMembership(channel: channel, user: user, precondition: precondition)
        case .setUser(let id, let fields):
            return .setUser(id: id, fields: fields, precondition: precondition)
        case .removeUser(let id):
            return .removeUser(id: id, precondition: .none)
        case .setChannel(let id, let fields):
            return .setChannel(id: id, fields: fields, precondition: precondition)
        case .removeChannel(let id):
            return .removeChannel(id: id, precondition: .none)
        case .setMuteList(let owner, let muted):
            // The Chat SDK's mute list is a user object, written whole: the op's change applied to
            // the server's list (from the row as marked in flight: a mute made while the list was
            // read is in it).
            let change = entry.baseSnapshot.flatMap { try? JSONDecoder().decode(MuteListChange.self, from: Data($0.utf8)) }
            let list = resolved.serverMuted.flatMap { server in change?.applied(to: server) } ?? muted
            return .setUser(
                id: ChatModeration.muteListId(of: owner), fields: ChatModeration.muteListFields(owner: owner, muted: list),
                precondition: .none)
        case .readPositions(let positions):
            guard let sets = resolved.membershipSets else {
                throw .missing("the server's memberships of the batch (read just before the write)")
            }
            return .setMemberships(user: positions.user, sets, answering: positions.channels)
        case .send, .addReaction, .removeReaction, .mention, .receipt, .hardDelete, .report, .invite, .push, .setAppRecord,
             .removeAppRecord:
            return nil
        }
    }
}

extension OutboxRequests {
    /// The wire's device of a push registration op (checked again: a row could be edited).
    static func device(_ registration: PushRegistration) throws -> PushDevice {
        switch registration.service {
        case "fcm":
            return try PushDevice(token: registration.token, type: .fcm)
        case "apns2":
            let environment = registration.environment.flatMap(PushEnvironment.init(rawValue:)) ?? .development
            return try PushDevice(token: registration.token, type: .apns2(topic: registration.topic ?? "", environment: environment))
        default:
            throw Problem.missing("a push service PubNub knows (fcm or apns2), not \(registration.service)")
        }
    }
}

extension PushRegistration {
    /// The wire's device this registration names (``ReplicaStore/ChatQueries/pushDevices()``'s
    /// devices, removed on sign-out). Throws for a service PubNub does not know or a bad token.
    package func pushDevice() throws -> PushDevice { try OutboxRequests.device(self) }
}
