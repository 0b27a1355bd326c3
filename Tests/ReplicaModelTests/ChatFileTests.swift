import Foundation
import ReplicaModel
import Testing

/// Which files a server message carries (`ChatFile.split`): a file message's `file`, a Chat SDK
/// body's `files`, and nothing else, whatever a peer sends.
@Suite("ChatFile: the files of a server message")
struct ChatFileTests {
    @Test("a file message: its inner message is the body, its file attached with size and type")
    func fileMessage() throws {
        let payload: JSONValue = ["message": ["id": "m1", "text": "hi"], "file": ["id": "f1", "name": "a.png", "size": 12, "mime-type": "image/png"]]
        let (body, files) = ChatFile.split(payload: payload, messageType: ChatFile.fileMessageType)
        #expect(body == ["id": "m1", "text": "hi"])
        #expect(files == [ChatFile(id: "f1", name: "a.png", size: 12, mimeType: "image/png")])
        // The Python SDK's shape: no size, message null.
        let python = ChatFile.split(payload: ["message": .null, "file": ["id": "f2", "name": "b"]], messageType: 4)
        #expect(python.body == .null && python.files == [ChatFile(id: "f2", name: "b")])
    }

    @Test("the same shape without message type 4 is an ordinary message: no file is made up")
    func notAFileMessage() {
        let payload: JSONValue = ["message": "x", "file": ["id": "f1", "name": "a"]]
        for type in [nil, 0, 1] as [Int?] {
            let (body, files) = ChatFile.split(payload: payload, messageType: type)
            #expect(body == payload && files.isEmpty)
        }
    }

    @Test("a Chat SDK text body: its files, at most 32, entries without a string id and name left out")
    func chatSDKFiles() {
        var list: [JSONValue] = (0..<40).map { ["id": .string("f\($0)"), "name": .string("n\($0)"), "url": "https://x/y", "type": "text/plain"] }
        list.insert(["id": 5, "name": "numeric id"], at: 0)
        list.insert(["name": "no id"], at: 0)
        list.insert("a string", at: 0)
        let payload: JSONValue = ["type": "text", "text": "see", "files": .array(list)]
        let (body, files) = ChatFile.split(payload: payload, messageType: nil)
        #expect(body == payload)
        #expect(files.count == 29, "32 read, 3 of them unreadable")
        #expect(files.first == ChatFile(id: "f0", name: "n0", mimeType: "text/plain", url: "https://x/y"))
    }

    @Test("hostile shapes: not objects, huge names, negative sizes")
    func hostile() {
        #expect(ChatFile.split(payload: "encrypted-string", messageType: 4).files.isEmpty)
        #expect(ChatFile.split(payload: ["file": "not an object"], messageType: 4).files.isEmpty)
        #expect(ChatFile.split(payload: ["files": "not an array"], messageType: nil).files.isEmpty)
        let long = String(repeating: "n", count: 5000)
        #expect(ChatFile(wire: ["id": "f", "name": .string(long)]) == nil)
        #expect(ChatFile(wire: ["id": "f", "name": "a", "size": -1])?.size == nil)
    }

    @Test("the Chat SDK's form of a sent file: name, id, url, type")
    func chatSDKValue() {
        let file = ChatFile(id: "f1", name: "a.png", size: 3, mimeType: "image/png", url: "https://o/v1/files/s/channels/c/files/f1/a.png")
        #expect(file.chatSDKValue == ["name": "a.png", "id": "f1", "url": "https://o/v1/files/s/channels/c/files/f1/a.png", "type": "image/png"])
        #expect(ChatFile(wire: file.chatSDKValue) == ChatFile(id: "f1", name: "a.png", mimeType: "image/png", url: file.url))
    }
}
