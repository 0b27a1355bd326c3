#if HTTPSimulator
import Foundation
import PubNubSimulator
import PubNubWire

/// The simulator-only endpoint that moves a served simulator's clock (an ``PubNubSimulator/OffsetClock``),
/// so that a test over HTTP can expire tokens and presence without sleeping:
///
/// - `POST /simulator/clock?advance=SECONDS` moves the clock forward (0 < SECONDS ≤ about 100
///   years; fractions allowed) and answers `200 {"now":UNIX_SECONDS,"offset":SECONDS}`;
/// - `GET /simulator/clock` answers the same without moving it;
/// - anything else under `/simulator/` answers 404, and a bad `advance` 400
///   `{"error":"...","status":400}`.
///
/// Only a server run with a clock control answers these (`pnreplicate simulator serve` always
/// has one); PubNub has no `/simulator` path, so no client request is taken for one.
public enum ClockControl {
    /// The path's first segment.
    public static let pathPrefix = "simulator"

    /// The answer to `request` when its path is under `/simulator/`; nil otherwise.
    public static func answer(_ request: WireRequest, clock: OffsetClock) -> WireResponse? {
        guard request.pathSegments.first == pathPrefix else { return nil }
        guard request.pathSegments.count == 2, request.pathSegments[1] == "clock" else {
            return json(404, #"{"error":"Not Found","status":404}"#)
        }
        switch request.method {
        case .get:
            return state(clock)
        case .post:
            guard let text = request.queryValue("advance"), let seconds = TimeInterval(text), seconds.isFinite,
                seconds > 0, seconds <= OffsetClock.maximumAdvance
            else {
                return json(400, #"{"error":"advance must be a number of seconds, more than 0 and at most 3155760000","status":400}"#)
            }
            clock.advance(by: seconds)
            return state(clock)
        default:
            return json(405, #"{"error":"Method Not Allowed","status":405}"#)
        }
    }

    private static func state(_ clock: OffsetClock) -> WireResponse {
        json(200, String(format: #"{"now":%.6f,"offset":%.6f}"#, clock.now.timeIntervalSince1970, clock.offset))
    }

    private static func json(_ status: Int, _ text: String) -> WireResponse {
        WireResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }
}
#endif
