import HandoffCore

/// Talks to the local agent over its control socket: one request, one response.
public struct ControlClient: Sendable {
    /// The socket path.
    public var socketPath: String

    public init(socketPath: String) { self.socketPath = socketPath }

    /// Sends a command and waits for its result. An unreachable agent is 4609 with what to do.
    public func call(_ command: String, _ arguments: [String: JSONValue] = [:]) async -> Result<JSONValue, HandoffError> {
        let connection: any FrameConnection
        do {
            connection = try await ControlSocketConnector.connect(path: socketPath, limits: ControlProtocol.limits)
        } catch {
            return .failure(.connectionUnavailable(
                "no agent answers at \(socketPath) (\(error)). Start handoffd, or point --socket / HANDOFF_SOCKET at its socketPath."))
        }
        let result: Result<JSONValue, HandoffError>
        do {
            try await connection.send([ControlProtocol.request(command, arguments)])
            if let frame = try await connection.receive() {
                result = try ControlProtocol.decodeResponse(frame)
            } else {
                result = .failure(.handoffFailed("the agent closed the connection without answering; see its log"))
            }
        } catch let error as HandoffError {
            result = .failure(error)
        } catch {
            result = .failure(.handoffFailed("the control connection failed: \(error)"))
        }
        await connection.close()
        return result
    }
}
