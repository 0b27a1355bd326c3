import Foundation
import ReplicaModel
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    @Test(
        "decodes each JSON kind to the matching case",
        arguments: [
            ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)), ("0", .int(0)),
            ("1", .int(1)), ("-42", .int(-42)), ("9223372036854775807", .int(.max)),
            ("9007199254740993", .int(9_007_199_254_740_993)), ("2.5", .double(2.5)), ("-0.125", .double(-0.125)),
            (#""text""#, .string("text")), (#""""#, .string("")), ("[]", .array([])),
            (#"[1,"a",null]"#, .array([.int(1), .string("a"), .null])), ("{}", .object([:])),
            (#"{"a":{"b":[true]}}"#, .object(["a": .object(["b": .array([.bool(true)])])])),
        ] as [(String, JSONValue)])
    func decodesKinds(text: String, expected: JSONValue) throws {
        #expect(try decodeJSON([JSONValue].self, from: "[\(text)]") == [expected])
    }

    @Test("integers re-encode without a fraction, doubles with one")
    func numbersReencode() throws {
        let value = try json(#"{"i":1,"d":1.5,"b":true,"big":9007199254740993}"#)
        #expect(try value.jsonString() == #"{"b":true,"big":9007199254740993,"d":1.5,"i":1}"#)
    }

    @Test("object equality ignores key order")
    func keyOrder() throws {
        #expect(try json(#"{"a":1,"b":[1,2]}"#) == json(#"{"b":[1,2],"a":1}"#))
        #expect(try json(#"{"a":1}"#) != json(#"{"a":true}"#))
        #expect(try json("[1,2]") != json("[2,1]"))
    }

    @Test("jsonString sorts keys and leaves slashes unescaped")
    func jsonStringFormat() throws {
        let value: JSONValue = ["z": "a/b", "a": nil, "m": [1, 2.5, "x"]]
        #expect(try value.jsonString() == #"{"a":null,"m":[1,2.5,"x"],"z":"a/b"}"#)
    }

    @Test("isNull and stringValue")
    func accessors() {
        #expect(JSONValue.null.isNull)
        #expect(!JSONValue.string("").isNull)
        #expect(JSONValue.string("s").stringValue == "s")
        #expect(JSONValue.int(1).stringValue == nil)
    }
}
