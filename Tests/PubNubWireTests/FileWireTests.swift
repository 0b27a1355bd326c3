import Foundation
import PubNubWire
import ReplicaModel
import Testing

/// File Sharing's requests (docs/files.md): nothing of PubNub's reaches storage, the 307 is read by
/// hand, the 5 MiB limit is on the bytes uploaded, the URL a message carries has no `auth`.
@Suite("File Sharing on the wire")
struct FileWireTests {
    static let ticketJSON = """
        {"status":200,"data":{"id":"f-1","name":"a b.png"},"file_upload_request":{"url":"http://storage.example:8080/bucket/","method":"POST",
         "expiration_date":"2026-11-27T10:00:00Z","form_fields":[{"key":"tagging","value":"<T/>"},{"key":"key","value":"sub/f-1/a b.png"},
         {"key":"Content-Type","value":"image/png"},{"key":"X-Amz-Signature","value":"abc"}]}}
        """

    @Test("the upload: the form fields in the server's order, then the file; no query, no key, no auth; a boundary RFC 2046 accepts")
    func uploadRequest() throws {
        let pubnub = try client(RecordingTransport(status: 200, body: Self.ticketJSON), auth: "secret-token")
        let ticket = try PubNubFiles.uploadTicket(from: WireResponse(status: 200, body: Data(Self.ticketJSON.utf8)))
        #expect(ticket.id == "f-1" && ticket.name == "a b.png" && ticket.formFields.map(\.key) == ["tagging", "key", "Content-Type", "X-Amz-Signature"])
        let (request, origin) = try pubnub.files.uploadRequest(ticket, bytes: Data([0, 1, 2]), contentType: "image/png")
        #expect(origin == Origin(host: "storage.example", port: 8080, secure: false))
        #expect(request.method == .post && request.pathSegments == ["bucket", ""] && request.query.isEmpty)
        let type = try #require(request.headers["Content-Type"])
        let boundary = try #require(type.components(separatedBy: "boundary=").last)
        #expect((1...70).contains(boundary.count))
        let body = String(decoding: try #require(request.body), as: UTF8.self)
        #expect(!body.contains("secret-token") && !body.contains("uuid") && !body.contains("pnsdk"))
        let names = body.components(separatedBy: "form-data; name=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(names == ["tagging", "key", "Content-Type", "X-Amz-Signature", "file"])
    }

    @Test("the 5 MiB limit is on the bytes uploaded: with a cipher key, the ciphertext")
    func limit() throws {
        let plain = try client(RecordingTransport(body: "{}"))
        #expect(throws: WireError.self) { try plain.files.uploadBytes(for: Data(count: FileLimits.maxUploadBytes + 1)) }
        #expect(try plain.files.uploadBytes(for: Data(count: FileLimits.maxUploadBytes)).count == FileLimits.maxUploadBytes)
        let configuration = try PubNubConfiguration(publishKey: "p", subscribeKey: "s", userId: "me", origin: "127.0.0.1:9", secure: false)
        for cryptor in [Cryptor.aesCbc, .legacy(randomIV: true), .legacy(randomIV: false)] {
            let crypto = CryptoModule(cipherKey: "k", encryptWith: cryptor)
            let encrypted = PubNubClient(configuration: configuration, transport: RecordingTransport(body: "{}"), crypto: crypto)
            for count in [1, 15, 16, 17, 1000] {
                #expect(try encrypted.files.uploadBytes(for: Data(count: count)).count == encrypted.files.uploadedSize(ofPlaintext: count))
            }
            #expect(throws: WireError.self) { try encrypted.files.uploadBytes(for: Data(count: FileLimits.maxUploadBytes)) }
        }
    }

    @Test("a download reads the 307's Location and fetches it with none of PubNub's query; an https origin refuses an http Location")
    func download() async throws {
        let transport = RecordingTransport { request in
            if request.pathSegments.first == "v1" {
                return WireResponse(status: 307, headers: ["Location": "http://files.example/sub/f-1/a.png?X-Amz-Signature=s1&X-Amz-Expires=3900"])
            }
            return WireResponse(status: 200, body: Data("bytes".utf8))
        }
        let pubnub = try client(transport, auth: "secret-token")
        #expect(try await pubnub.files.downloadFile(channel: "c", id: "f-1", name: "a.png") == Data("bytes".utf8))
        let fetch = try #require(transport.requests.last)
        #expect(fetch.pathSegments == ["sub", "f-1", "a.png"])
        #expect(fetch.query.map(\.name) == ["X-Amz-Signature", "X-Amz-Expires"], "only the Location's own query")
        let first = try #require(transport.requests.first)
        #expect(first.queryValue("auth") == "secret-token" && first.pathSegments == ["v1", "files", "sub-c-test", "channels", "c", "files", "f-1", "a.png"])

        let secure = PubNubClient(
            configuration: try PubNubConfiguration(publishKey: "p", subscribeKey: "s", userId: "me", origin: "ps.example"),
            transport: transport)
        await #expect(throws: WireError.self) { try await secure.files.downloadFile(channel: "c", id: "f-1", name: "a.png") }
        // A 200 where a redirect belongs is refused, not read as the file.
        let noRedirect = try client(RecordingTransport(status: 200, body: "not a file"))
        await #expect(throws: WireError.self) { try await noRedirect.files.downloadFile(channel: "c", id: "f", name: "n") }
    }

    @Test("the publish: a GET with the payload in the path, store always sent; the URL a message names has no auth")
    func publishFile() throws {
        let pubnub = try client(RecordingTransport(body: "[1,\"Sent\",\"1\"]"), auth: "secret-token")
        let request = try pubnub.files.publishFileRequest(PublishFileRequest(channel: "c", fileId: "f", fileName: "a.png", message: ["text": "hi"], store: false))
        #expect(request.method == .get && Array(request.pathSegments.prefix(3)) == ["v1", "files", "publish-file"])
        #expect(try JSONValue(jsonData: Data(try #require(request.pathSegments.last).utf8)) == ["message": ["text": "hi"], "file": ["id": "f", "name": "a.png"]])
        #expect(request.queryValue("store") == "0")
        let url = pubnub.files.fileURL(channel: "c", id: "f", name: "a b.png")
        #expect(url == "http://127.0.0.1:9/v1/files/sub-c-test/channels/c/files/f/a%20b.png")
        #expect(!url.contains("auth") && !url.contains("uuid") && !url.contains("signature"))
    }

    @Test("storage's XML errors become typed errors of family storage")
    func storageErrors() async throws {
        let xml = "<Error><Code>AccessDenied</Code><Message>Invalid according to Policy: Policy expired.</Message><RequestId/></Error>"
        let pubnub = try client(RecordingTransport(status: 403, body: xml))
        let ticket = try PubNubFiles.uploadTicket(from: WireResponse(status: 200, body: Data(Self.ticketJSON.utf8)))
        do {
            try await pubnub.files.upload(ticket, bytes: Data([1]), contentType: "image/png")
            Issue.record("a 403 was accepted")
        } catch {
            guard case .service(let service) = error else { Issue.record("\(error)"); return }
            #expect(service.family == .storage && service.status == 403 && service.message == "AccessDenied: Invalid according to Policy: Policy expired.")
        }
    }
}
