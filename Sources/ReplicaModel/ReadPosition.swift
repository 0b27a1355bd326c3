import Foundation

/// Reads the PubNub Chat SDK's read position from a membership's custom data:
/// `lastReadMessageTimetoken`, a timetoken written as a string (a number is accepted too).
public enum ReadPosition {
    /// The read position in `custom` (a membership's custom data as JSON), or nil when it has none.
    public static func timetoken(in custom: JSONValue?) -> Timetoken? {
        switch custom?.objectValue?[ChatSDKFormat.lastReadKey] {
        case .string(let raw)?: UInt64(raw).map(Timetoken.init(rawValue:))
        case .int(let value)? where value >= 0: Timetoken(rawValue: UInt64(value))
        default: nil
        }
    }
}
