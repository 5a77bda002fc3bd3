/// The local control protocol between the agent and the `handoff` CLI (later, apps) over the
/// agent's Unix socket: frames of kind `controlRequest` / `controlResponse` whose payload is JSON.
///
/// A request is `{"command": NAME, ...arguments}`. A response is `{"ok": RESULT}` or
/// `{"error": {"code": 4608, "name": "userActivityHandoffFailed", "message": "..."}}`.
/// Commands: `status`, `peers`, `list`, `publish` (`activity`), `resign` (`id`), `continue` (`id`),
/// and for apps `registerApp` (`app`: the manifest) and `reply` (`replyID`, `result`). A request
/// may carry `requestID`, echoed in its response. After `registerApp` the agent also sends events,
/// `{"event": NAME, ...}`, on the connection (docs/PROTOCOL.md lists them).
public enum ControlProtocol {
    /// Frame limits on the control socket: local apps may publish large userInfo.
    public static let limits = FrameLimits(maxFrameBytes: 16 * 1024 * 1024, maxUserInfoBytes: 0)

    /// A request frame.
    public static func request(_ command: String, _ arguments: [String: JSONValue] = [:]) -> Frame {
        var members = arguments
        members["command"] = .string(command)
        return Frame(kind: .controlRequest, payload: JSONValue.object(members).serializedBytes)
    }

    /// A response frame.
    public static func response(_ result: Result<JSONValue, HandoffError>) -> Frame {
        Frame(kind: .controlResponse, payload: responseJSON(result).serializedBytes)
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

    /// Reads a request: the command name and the whole object.
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
        if let ok = body["ok"] { return .success(ok) }
        if let error = body["error"], let code = error["code"]?.int64Value {
            return .failure(HandoffError(HandoffError.Code(rawValue: Int(code)), error["message"]?.stringValue ?? "no message"))
        }
        throw .handoffFailed("the agent sent a response without ok or error")
    }
}
