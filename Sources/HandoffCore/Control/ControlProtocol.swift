/// The local control protocol between the agent and its clients (the `handoff` CLI and HandoffKit
/// apps) over the agent's Unix socket: frames of kind `controlRequest` / `controlResponse` whose
/// payload is JSON (docs/PROTOCOL.md, "Control socket").
///
/// A request is `{"command": NAME, ...arguments}` (``ControlRequest``). A response is
/// `{"ok": RESULT}` or `{"error": {"code": 4608, "name": "userActivityHandoffFailed", "message": "..."}}`.
/// A request may carry `requestID`, echoed in its response. The agent also sends events,
/// `{"event": NAME, ...}` (``AppEvent``), on the connection.
public enum ControlProtocol {
    /// The version of the control protocol this build speaks; `status` reports it as
    /// `controlProtocolVersion`. Fields and commands are only ever added within a version.
    public static let version = 1

    /// Frame limits on the control socket: local apps may publish large userInfo.
    public static let limits = FrameLimits(maxFrameBytes: 16 * 1024 * 1024, maxUserInfoBytes: 0)

    /// A request frame.
    public static func request(_ command: String, _ arguments: [String: JSONValue] = [:]) -> Frame {
        var members = arguments
        members["command"] = .string(command)
        return Frame(kind: .controlRequest, payload: JSONValue.object(members).serializedBytes)
    }

    /// A response frame, with the request's `requestID` when it had one.
    public static func response(_ result: Result<JSONValue, HandoffError>, requestID: JSONValue? = nil) -> Frame {
        Frame(kind: .controlResponse, payload: responseJSON(result, requestID: requestID).serializedBytes)
    }

    /// A response body: `{"ok": ...}` or `{"error": {...}}`, with the request's `requestID`.
    public static func responseJSON(_ result: Result<JSONValue, HandoffError>, requestID: JSONValue? = nil) -> JSONValue {
        var body: [String: JSONValue]
        switch result {
        case .success(let value): body = ["ok": value]
        case .failure(let error): body = ["error": errorJSON(error)]
        }
        if let requestID { body["requestID"] = requestID }
        return .object(body)
    }

    /// The JSON form of an error: `{"code", "name", "message"}`.
    public static func errorJSON(_ error: HandoffError) -> JSONValue {
        .object(["code": .integer(error.code.rawValue), "name": .string(error.code.name), "message": .string(error.message)])
    }

    /// Reads a request frame: its command's name and the whole object. Throws when the frame is
    /// not a JSON control request with a command; ``ControlRequest/init(json:)`` checks the rest.
    public static func decodeRequest(_ frame: Frame) throws(HandoffError) -> (command: String, body: JSONValue) {
        guard frame.kind == .controlRequest else { throw .handoffFailed("expected a control request, got a \(frame.kind) frame") }
        let body: JSONValue
        do { body = try JSONValue(parsing: frame.payload) } catch { throw .handoffFailed("the request is not JSON: \(error)") }
        guard let command = body["command"]?.stringValue else { throw .handoffFailed("the request has no \"command\"") }
        return (command, body)
    }

    /// Reads a response.
    public static func decodeResponse(_ frame: Frame) throws(HandoffError) -> Result<JSONValue, HandoffError> {
        guard frame.kind == .controlResponse, let body = try? JSONValue(parsing: frame.payload) else {
            throw .handoffFailed("the agent sent an invalid response")
        }
        guard body["ok"] != nil || body["error"] != nil else { throw .handoffFailed("the agent sent a response without ok or error") }
        return result(of: body)
    }

    /// The result a response body carries: its `ok` value, or its `error` (an error without a
    /// code is 4608).
    public static func result(of body: JSONValue) -> Result<JSONValue, HandoffError> {
        if let ok = body["ok"] { return .success(ok) }
        return .failure(error(fromJSON: body["error"]))
    }

    /// Reads the JSON form of an error (``errorJSON(_:)``); what is missing is 4608, "no message".
    public static func error(fromJSON json: JSONValue?) -> HandoffError {
        HandoffError(HandoffError.Code(rawValue: Int(json?["code"]?.int64Value ?? 4608)), json?["message"]?.stringValue ?? "no message")
    }
}
