import Foundation
import Testing
import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// A server on virtual time, driven with raw requests (the bytes a client sends), for File Sharing.
struct FileWorld {
    /// Virtual time, starting at 2024-01-01T00:17:05Z.
    let clock = VirtualClock(start: Date(timeIntervalSince1970: 1_704_068_225))
    let server: PubNubServer

    init() { server = PubNubServer(clock: clock) }

    /// One upload form as `generate-upload-url` answered it.
    struct Form {
        var id: String
        var name: String
        var url: String
        var expiration: String
        var fields: [(key: String, value: String)]
    }

    /// Sends raw bytes: the target is a path (`/v1/...`) or an absolute URL on the storage origin.
    func send(_ method: String, _ target: String, headers: [String: String] = [:], body: Data? = nil) async throws -> WireResponse {
        var path = target
        let origin = await server.storageOrigin
        if path.hasPrefix(origin) { path.removeFirst(origin.count) }
        let request = try #require(RawRequest(method: method, target: path, headers: headers, body: body).decoded(), "unreadable: \(target)")
        return await server.respond(request)
    }

    func json(_ response: WireResponse) throws -> [String: JSONValue] {
        try #require(JSONValue.parse(response.body)?.objectValue, "not a JSON object: \(String(decoding: response.body, as: UTF8.self))")
    }

    func generate(channel: String, name: String) async throws -> Form {
        let body = try JSONValue.object(["name": .string(name)]).jsonData()
        let answer = try await send(
            "POST", "/v1/files/demo/channels/\(PercentEncoding.pathSegment(channel))/generate-upload-url?uuid=me",
            headers: ["Content-Type": "application/json"], body: body)
        #expect(answer.status == 200)
        let top = try json(answer)
        let data = try #require(top["data"]?.objectValue)
        let request = try #require(top["file_upload_request"]?.objectValue)
        let fields = try #require(request["form_fields"]?.arrayValue).compactMap { item -> (String, String)? in
            guard let key = item.objectValue?["key"]?.stringValue, let value = item.objectValue?["value"]?.stringValue else { return nil }
            return (key, value)
        }
        return Form(
            id: try #require(data["id"]?.stringValue), name: try #require(data["name"]?.stringValue),
            url: try #require(request["url"]?.stringValue), expiration: try #require(request["expiration_date"]?.stringValue),
            fields: fields.map { (key: $0.0, value: $0.1) })
    }

    /// A multipart form: the fields in order, then the part `file`.
    static func multipart(_ fields: [(key: String, value: String)], file: Data, filename: String, boundary: String = "b0undary")
        -> (body: Data, contentType: String)
    {
        var body = Data()
        for field in fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field.key)\"\r\n\r\n\(field.value)\r\n".utf8))
        }
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\n".utf8))
        body.append(Data("Content-Type: application/octet-stream\r\n\r\n".utf8))
        body.append(file)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return (body, "multipart/form-data; boundary=\(boundary)")
    }

    func upload(_ form: Form, bytes: Data, fields: [(key: String, value: String)]? = nil, query: String = "") async throws -> WireResponse {
        let (body, type) = Self.multipart(fields ?? form.fields, file: bytes, filename: form.name)
        return try await send("POST", form.url + query, headers: ["Content-Type": type], body: body)
    }

    func publishFile(channel: String, form: Form, message: JSONValue = "hello", store: Bool = true) async throws -> WireResponse {
        let payload = try JSONValue.object(["message": message, "file": ["id": .string(form.id), "name": .string(form.name)]]).jsonString()
        return try await send(
            "GET",
            "/v1/files/publish-file/demo/demo/0/\(PercentEncoding.pathSegment(channel))/0/\(PercentEncoding.pathSegment(payload))"
                + "?uuid=me&meta=null&ttl=0&store=\(store ? 1 : 0)")
    }

    /// The 307's `Location` for a file.
    func location(channel: String, id: String, name: String) async throws -> String {
        let answer = try await send("GET", "/v1/files/demo/channels/\(channel)/files/\(id)/\(PercentEncoding.pathSegment(name))?uuid=me")
        #expect(answer.status == 307 && answer.body.isEmpty)
        return try #require(answer.header("Location"))
    }

    /// An XML error's `<Code>`.
    static func s3Code(_ response: WireResponse) -> String? {
        let text = String(decoding: response.body, as: UTF8.self)
        guard response.header("Content-Type") == "application/xml", let start = text.range(of: "<Code>"),
              let end = text.range(of: "</Code>") else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }
}

@Suite("File Sharing in the simulator: the files API and S3-like storage")
struct FileSharingTests {
    @Test("generate, upload, publish, list, redirect, download, delete: the bytes come back identical, then the file is gone")
    func roundTrip() async throws {
        let world = FileWorld()
        let bytes = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let form = try await world.generate(channel: "room 1", name: "king arthur.txt")
        #expect(form.name == "king arthur.txt" && form.url.hasPrefix("http://files.simulator.invalid/"))
        #expect(form.fields.map(\.key) == [
            "tagging", "key", "Content-Type", "X-Amz-Credential", "X-Amz-Security-Token", "X-Amz-Algorithm", "X-Amz-Date",
            "Policy", "X-Amz-Signature",
        ])
        #expect(form.expiration == "2024-01-01T00:18:05Z")
        let policy = try #require(form.fields.first { $0.key == "Policy" }.flatMap { Data(base64Encoded: $0.value) })
        let policyText = String(decoding: policy, as: UTF8.self)
        #expect(policyText.contains(#"["content-length-range",0,5242880]"#) && policyText.contains(#""expiration":"2024-01-01T00:18:05Z""#))
        #expect(await world.server.pendingUploadCount == 1)

        let uploaded = try await world.upload(form, bytes: bytes)
        #expect(uploaded.status == 204 && uploaded.body.isEmpty && uploaded.header("Location") != nil)
        #expect(await world.server.pendingUploadCount == 0)
        let published = try await world.publishFile(channel: "room 1", form: form)
        #expect(published.status == 200 && published.header("Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(JSONValue.parse(published.body)?.arrayValue?.prefix(2) == [1, "Sent"])

        let list = try world.json(try await world.send("GET", "/v1/files/demo/channels/room%201/files?uuid=me"))
        #expect(list["count"] == 1 && list["next"] == nil && list["status"] == 200)
        let item = try #require(list["data"]?.arrayValue?.first?.objectValue)
        #expect(item["id"]?.stringValue == form.id && item["name"] == "king arthur.txt" && item["size"] == 3000)
        #expect(item["created"] == "2024-01-01T00:17:05Z")

        let location = try await world.location(channel: "room%201", id: form.id, name: form.name)
        #expect(location.contains("X-Amz-Date=20240101T000000Z&X-Amz-Expires=3900&X-Amz-Signature="))
        let query = try #require(location.split(separator: "?").last)
        #expect(query.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-=&".contains($0)) })
        let download = try await world.send("GET", location)
        #expect(download.status == 200 && download.body == bytes)
        #expect(download.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(await world.server.storedFiles(channel: "room 1").map(\.bytes) == [bytes])

        let deleted = try await world.send("DELETE", "/v1/files/demo/channels/room%201/files/\(form.id)/king%20arthur.txt?uuid=me")
        #expect(deleted.status == 200 && deleted.body == Data(#"{"status":200}"#.utf8))
        #expect(FileWorld.s3Code(try await world.send("GET", location)) == "NoSuchKey")
        let gone = try await world.send("GET", "/v1/files/demo/channels/room%201/files/\(form.id)/king%20arthur.txt?uuid=me")
        #expect(try gone.status == 404 && world.json(gone)["error"]?.objectValue?["source"] == "Files")
        #expect((try world.json(try await world.send("GET", "/v1/files/demo/channels/room%201/files")))["count"] == 0)
        #expect(try await world.send("DELETE", "/v1/files/demo/channels/room%201/files/\(form.id)/king%20arthur.txt").status == 404)
    }

    @Test("the in-process transport reaches storage on another origin with the same server")
    func storageOriginInProcess() async throws {
        let world = FileWorld()
        let transport = InProcessTransport(server: world.server)
        let form = try await world.generate(channel: "c", name: "a.bin")
        let storage = try Origin(parsing: await world.server.storageOrigin)
        let (body, type) = FileWorld.multipart(form.fields, file: Data("abc".utf8), filename: "a.bin")
        let upload = WireRequest(
            method: .post, pathSegments: ["file-storage", "upload"], headers: ["Content-Type": type], body: body,
            operation: "uploadFile")
        #expect(RawRequest(encoding: upload, for: storage).target == "/file-storage/upload")
        #expect(try await transport.send(upload, to: storage).status == 204)
        #expect(await world.server.storedFiles(channel: "c").first?.bytes == Data("abc".utf8))
    }

    @Test("an upload form expires 60 s after it was handed out, on the server's clock")
    func expiry() async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "late.txt")
        world.clock.advance(by: 61)
        let late = try await world.upload(form, bytes: Data("x".utf8))
        #expect(late.status == 403 && FileWorld.s3Code(late) == "AccessDenied")
        #expect(String(decoding: late.body, as: UTF8.self).contains("Policy expired."))
        #expect(await world.server.storedFiles(channel: "c").isEmpty)

        let onTime = try await world.generate(channel: "c", name: "soon.txt")
        world.clock.advance(by: 60)
        #expect(try await world.upload(onTime, bytes: Data("y".utf8)).status == 204)
        // A download URL is valid for 3900 s from its hour.
        let location = try await world.location(channel: "c", id: onTime.id, name: onTime.name)
        world.clock.advance(by: 3900)
        #expect(FileWorld.s3Code(try await world.send("GET", location)) == "AccessDenied")
    }

    @Test("storage refuses: over 5 MiB, a query, a tampered field, a malformed body, PubNub keys on a download")
    func refusals() async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "big.bin")
        let tooBig = try await world.upload(form, bytes: Data(count: 5_242_881))
        #expect(tooBig.status == 400 && FileWorld.s3Code(tooBig) == "EntityTooLarge")
        let query = try await world.upload(form, bytes: Data("x".utf8), query: "?uuid=me")
        #expect(query.status == 400 && FileWorld.s3Code(query) == "AuthorizationQueryParametersError")
        for field in ["X-Amz-Signature", "Policy", "key", "X-Amz-Date"] {
            let tampered = form.fields.map { $0.key == field ? (key: $0.key, value: $0.value + "0") : $0 }
            let answer = try await world.upload(form, bytes: Data("x".utf8), fields: tampered)
            #expect(answer.status == 403 && FileWorld.s3Code(answer) == "AccessDenied", "\(field)")
        }
        let malformed = try await world.send(
            "POST", form.url, headers: ["Content-Type": "multipart/form-data; boundary=zz"], body: Data("--zz\r\ngarbage".utf8))
        #expect(malformed.status == 400 && FileWorld.s3Code(malformed) == "MalformedPOSTRequest")
        #expect(try await world.upload(form, bytes: Data(count: 5_242_880)).status == 204)
        #expect(await world.server.storedFiles(channel: "c").map(\.size) == [5_242_880])

        let location = try await world.location(channel: "c", id: form.id, name: form.name)
        for extra in ["&uuid=me", "&pnsdk=x", "&auth=t"] {
            #expect(FileWorld.s3Code(try await world.send("GET", location + extra)) == "AccessDenied", "\(extra)")
        }
        let forged = location.replacingOccurrences(of: "X-Amz-Signature=", with: "X-Amz-Signature=0")
        #expect(FileWorld.s3Code(try await world.send("GET", forged)) == "AccessDenied")
    }

    @Test("uploading again to the same key replaces the object, as S3 does")
    func overwrite() async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "a.txt")
        #expect(try await world.upload(form, bytes: Data("one".utf8)).status == 204)
        #expect(try await world.upload(form, bytes: Data("second".utf8)).status == 204)
        #expect(await world.server.storedFiles(channel: "c").map(\.bytes) == [Data("second".utf8)])
    }

    @Test("a file message has message_type 4 in history and e 4 on subscribe; store=0 keeps it out of history")
    func fileMessageType() async throws {
        let world = FileWorld()
        let handshake = try await world.send("GET", "/v2/subscribe/demo/c/0?uuid=me&tt=0")
        let cursor = try #require(world.json(handshake)["t"]?.objectValue?["t"]?.stringValue)
        let form = try await world.generate(channel: "c", name: "a.txt")
        _ = try await world.upload(form, bytes: Data("a".utf8))
        #expect(try await world.publishFile(channel: "c", form: form).status == 200)
        #expect(try await world.publishFile(channel: "c", form: form, message: "unstored", store: false).status == 200)
        _ = try await world.send("GET", "/publish/demo/demo/0/c/0/%22plain%22?uuid=me")

        let history = try world.json(try await world.send("GET", "/v3/history/sub-key/demo/channel/c?include_message_type=true&uuid=me"))
        let items = try #require(history["channels"]?.objectValue?["c"]?.arrayValue)
        #expect(items.count == 2)
        #expect(items.first?.objectValue?["message_type"] == 4)
        #expect(items.first?.objectValue?["message"]?.objectValue?["file"]?.objectValue?["id"]?.stringValue == form.id)
        // An ordinary message keeps what it answered before (null), as the recorded real answer does.
        #expect(items.last?.objectValue?["message_type"] == .null)

        let events = try world.json(try await world.send("GET", "/v2/subscribe/demo/c/0?uuid=me&tt=\(cursor)"))
        let kinds = try #require(events["m"]?.arrayValue).map { $0.objectValue?["e"] }
        #expect(kinds == [4, 4, nil])
    }

    @Test("an encrypted file message (a JSON string) is stored and relayed as it came")
    func encryptedFileMessage() async throws {
        let world = FileWorld()
        let answer = try await world.send("GET", "/v1/files/publish-file/demo/demo/0/c/0/%22a25pZ2h0c29mbmkxMjM0NRV4jk%22?uuid=me&store=1")
        #expect(answer.status == 200)
        #expect(await world.server.storedMessages(channel: "c").map(\.message) == ["a25pZ2h0c29mbmkxMjM0NRV4jk"])
        let wrongKey = try await world.send("GET", "/v1/files/publish-file/demo/other/0/c/0/1?uuid=me")
        #expect(wrongKey.status == 400)
    }

    @Test("list pages oldest first, limit 1...100, next only while more remain; a bad limit has PubNub's exact body")
    func paging() async throws {
        let world = FileWorld()
        var ids: [String] = []
        for i in 0..<5 {
            world.clock.advance(by: 1)
            let form = try await world.generate(channel: "c", name: "f\(i).txt")
            _ = try await world.upload(form, bytes: Data("\(i)".utf8))
            ids.append(form.id)
        }
        _ = try await world.generate(channel: "c", name: "never-uploaded.txt")
        var seen: [String] = []
        var next: String?
        var pages = 0
        repeat {
            let page = try world.json(try await world.send(
                "GET", "/v1/files/demo/channels/c/files?limit=2" + (next.map { "&next=\($0)" } ?? "")))
            seen += (page["data"]?.arrayValue ?? []).compactMap { $0.objectValue?["id"]?.stringValue }
            next = page["next"]?.stringValue
            pages += 1
        } while next != nil && pages < 10
        #expect(seen == ids && pages == 3)
        #expect(await world.server.pendingUploadCount == 1)
        #expect(await world.server.allStoredFiles().mapValues { $0.map(\.id) } == ["c": ids])

        for limit in ["0", "101", "x"] {
            let bad = try await world.send("GET", "/v1/files/demo/channels/c/files?limit=\(limit)")
            #expect(bad.status == 400)
            #expect(String(decoding: bad.body, as: UTF8.self)
                == #"{"status":400,"error":{"source":"Files","message":"Invalid limit parameter. Limit must be an integer between 1 and 100 (inclusive).","code":3001}}"#)
        }
        let wrongKey = try await world.send("GET", "/v1/files/other/channels/c/files")
        #expect(try wrongKey.status == 400 && world.json(wrongKey)["error"]?.objectValue?["source"] == "Files")
        let noName = try await world.send("POST", "/v1/files/demo/channels/c/generate-upload-url", body: Data(#"{"name":""}"#.utf8))
        #expect(try noName.status == 400 && world.json(noName)["error"]?.objectValue?["code"] == 3001)
    }

    @Test("delete tolerates the Kotlin Chat SDK passing the file id as the channel; names with / work encoded or not")
    func deleteTolerance() async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "dir/a b.txt")
        #expect(try await world.upload(form, bytes: Data("z".utf8)).status == 204)
        let raw = try await world.send("GET", "/v1/files/demo/channels/c/files/\(form.id)/dir/a%20b.txt?uuid=me")
        let encoded = try await world.send("GET", "/v1/files/demo/channels/c/files/\(form.id)/dir%2Fa%20b.txt?uuid=me")
        #expect(raw.status == 307 && encoded.status == 307)
        let location = try #require(raw.header("Location"))
        #expect(try await world.send("GET", location).body == Data("z".utf8))
        let kmp = try await world.send("DELETE", "/v1/files/demo/channels/\(form.id)/files/\(form.id)/dir%2Fa%20b.txt?uuid=me")
        #expect(kmp.status == 200)
        #expect(await world.server.storedFiles(channel: "c").isEmpty)
    }

    @Test("faults on storage answer in S3's shape; on the files API in the Files envelope")
    func storageFaults() async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "a.txt")
        let (body, type) = FileWorld.multipart(form.fields, file: Data("a".utf8), filename: "a.txt")
        let upload = try #require(RawRequest(method: "POST", target: "/file-storage/upload", headers: ["Content-Type": type], body: body).decoded())
        for (fault, status, code) in [
            (Fault.serverError(status: 500), 500, "InternalError"), (.serverError(status: 503), 503, "SlowDown"),
            (.tooManyRequests(retryAfter: 2), 503, "SlowDown"), (.forbidden, 403, "AccessDenied"),
        ] {
            let answer = try await FaultApplication.run(upload, on: world.server, fault: fault)
            #expect(answer.status == status && FileWorld.s3Code(answer) == code, "\(fault)")
        }
        #expect(await world.server.storedFiles(channel: "c").isEmpty)
        let list = try #require(RawRequest(method: "GET", target: "/v1/files/demo/channels/c/files").decoded())
        let failed = try await FaultApplication.run(list, on: world.server, fault: .serverError(status: 500))
        #expect(try failed.status == 500 && world.json(failed)["error"]?.objectValue?["source"] == "Files")
    }

    @Test("hostile multipart bodies never crash the parser", arguments: [
        "", "--", "--b0undary", "--b0undary\r\n", "--b0undary\r\n\r\n\r\n--b0undary--",
        "--b0undary\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b0undary--",
        "--b0undary\r\nContent-Disposition: form-data; name=\"key\r\n\r\nx\r\n--b0undary--",
        "--b0undary\r\nX\r\n\r\nx", "preamble\r\n--b0undary--", "--b0undary  \r\nContent-Disposition: form-data; name=k\r\n\r\n",
    ])
    func hostileMultipart(text: String) async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "a.txt")
        let answer = try await world.send("POST", form.url, headers: ["Content-Type": "multipart/form-data; boundary=b0undary"], body: Data(text.utf8))
        #expect(answer.status == 400 || answer.status == 403)
        #expect(await world.server.storedFiles(channel: "c").isEmpty)
    }

    @Test("seeded fuzz: mutated upload forms are answered 204, 400 or 403, never a crash, and only a valid form stores")
    func fuzzUploads() async throws {
        let world = FileWorld()
        let form = try await world.generate(channel: "c", name: "a.txt")
        let (valid, type) = FileWorld.multipart(form.fields, file: Data("payload".utf8), filename: "a.txt")
        var random = SplitMix64(seed: 0xF11E)
        for round in 0..<300 {
            var bytes = [UInt8](valid)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let at = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(contentsOf: Array("\r\n--b0undary".utf8), at: at)
                default: bytes.removeSubrange(at..<min(bytes.count, at + Int(random.next() % 64)))
                }
                if bytes.isEmpty { bytes = [0] }
            }
            let answer = try await world.send("POST", form.url, headers: ["Content-Type": type], body: Data(bytes))
            #expect([204, 400, 403].contains(answer.status), "round \(round)")
            if answer.status == 204 {
                let stored = await world.server.storedFiles(channel: "c")
                #expect(stored.count == 1, "round \(round)")
            }
        }
    }

    @Test("equal runs give equal ids, forms and state digests")
    func determinism() async throws {
        func run() async throws -> (String, String) {
            let world = FileWorld()
            let form = try await world.generate(channel: "c", name: "a.txt")
            _ = try await world.upload(form, bytes: Data("a".utf8))
            return (form.id + form.fields.map(\.value).joined(), await world.server.stateDigest())
        }
        let first = try await run()
        let second = try await run()
        #expect(first == second)
    }
}
