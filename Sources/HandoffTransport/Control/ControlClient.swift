import HandoffCore

/// Talks to the local agent over its control socket: one request, one response.
public struct ControlClient: Sendable {
    /// The socket path.
    public var socketPath: String

    public init(socketPath: String) { self.socketPath = socketPath }

    /// Connects to the agent; an unreachable agent is 4609 saying what to do.
    private func connect() async -> Result<any FrameConnection, HandoffError> {
        do {
            return .success(try await ControlSocketConnector.connect(path: socketPath, limits: ControlProtocol.limits))
        } catch let refused as ControlSocketError {
            return .failure(.connectionUnavailable(refused.reason))
        } catch {
            return .failure(.connectionUnavailable(
                "no agent answers at \(socketPath) (\(error)). Start handoffd, or point --socket / HANDOFF_SOCKET at its socketPath."))
        }
    }

    /// Sends a command and waits for its result. An unreachable agent is 4609 with what to do.
    public func call(_ command: String, _ arguments: [String: JSONValue] = [:]) async -> Result<JSONValue, HandoffError> {
        let connection: any FrameConnection
        switch await connect() {
        case .success(let opened): connection = opened
        case .failure(let error): return .failure(error)
        }
        let result: Result<JSONValue, HandoffError>
        do {
            do { try await connection.send([ControlProtocol.request(command, arguments)]) } catch {
                // The agent may have answered and closed before reading (a refusal): read it.
                guard let frame = try? await connection.receive() else { throw error }
                await connection.close()
                return (try? ControlProtocol.decodeResponse(frame)) ?? .failure(.handoffFailed("the control connection failed: \(error)"))
            }
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

    /// Sends a command that the agent answers with events before its result (`pair`): each event
    /// goes to `onEvent`, and a non-nil answer is sent back as the event's `reply`.
    public func converse(_ command: String, _ arguments: [String: JSONValue] = [:],
                         onEvent: (JSONValue) async -> JSONValue?) async -> Result<JSONValue, HandoffError> {
        let connection: any FrameConnection
        switch await connect() {
        case .success(let opened): connection = opened
        case .failure(let error): return .failure(error)
        }
        defer { Task { await connection.close() } }
        do {
            var request = arguments
            request["requestID"] = .string("main")
            do { try await connection.send([ControlProtocol.request(command, request)]) } catch {
                guard let frame = try? await connection.receive() else { throw error }
                return (try? ControlProtocol.decodeResponse(frame)) ?? .failure(.handoffFailed("the control connection failed: \(error)"))
            }
            while let frame = try await connection.receive() {
                guard frame.kind == .controlResponse, let body = try? JSONValue(parsing: frame.payload) else {
                    return .failure(.handoffFailed("the agent sent an invalid response"))
                }
                if body["event"] != nil {
                    if let answer = await onEvent(body), let replyID = body["replyID"] {
                        try await connection.send([ControlProtocol.request("reply", ["replyID": replyID, "result": answer, "requestID": .string("reply")])])
                    }
                    continue
                }
                if body["requestID"]?.stringValue == "reply" { continue }
                return try ControlProtocol.decodeResponse(frame)
            }
            return .failure(.handoffFailed("the agent closed the connection without answering; see its log"))
        } catch let error as HandoffError {
            return .failure(error)
        } catch {
            return .failure(.handoffFailed("the control connection failed: \(error)"))
        }
    }
}
