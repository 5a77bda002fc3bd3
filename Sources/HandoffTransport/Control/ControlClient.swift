import HandoffCore

/// Talks to the local agent over its control socket: one request, one response.
public struct ControlClient: Sendable {
    /// The socket path.
    public var socketPath: String

    public init(socketPath: String) { self.socketPath = socketPath }

    /// What to do when the agent cannot be reached.
    public static let hint = "Start handoffd, or point --socket / HANDOFF_SOCKET at its socketPath."

    /// Connects to the agent; an unreachable agent is 4609 saying what to do.
    private func connect() async -> Result<any FrameConnection, HandoffError> {
        do throws(HandoffError) {
            return .success(try await ControlChannel.openConnection(socketPath: socketPath, hint: Self.hint))
        } catch {
            return .failure(error)
        }
    }

    /// Sends a request and waits for its result. An unreachable agent is 4609 with what to do.
    public func call(_ request: ControlRequest) async -> Result<JSONValue, HandoffError> {
        await call(json: request.json)
    }

    /// Sends a command by name, for a command this version has no ``ControlRequest`` for (an
    /// agent of a later version), and waits for its result.
    public func call(_ command: String, _ arguments: [String: JSONValue] = [:]) async -> Result<JSONValue, HandoffError> {
        var body = arguments
        body["command"] = .string(command)
        return await call(json: .object(body))
    }

    /// One request, one response, on a connection of its own.
    private func call(json body: JSONValue) async -> Result<JSONValue, HandoffError> {
        let connection: any FrameConnection
        switch await connect() {
        case .success(let opened): connection = opened
        case .failure(let error): return .failure(error)
        }
        let result: Result<JSONValue, HandoffError>
        do {
            do { try await connection.send([Frame(kind: .controlRequest, payload: body.serializedBytes)]) } catch {
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

    /// Sends a request that the agent answers with events before its result (`pair`): each
    /// event goes to `onEvent`, and a non-nil answer is sent back as the event's `reply`.
    public func converse(_ request: ControlRequest, onEvent: @escaping @Sendable (AppEvent) async -> AppReply?) async -> Result<JSONValue, HandoffError> {
        let channel: ControlChannel
        do {
            channel = try await ControlChannel.connect(socketPath: socketPath, hint: Self.hint)
        } catch {
            return .failure(error)
        }
        return await withTaskGroup(of: Void.self) { group in
            group.addTask { await channel.readFrames() }
            group.addTask {
                for await (event, replyID) in channel.events {
                    guard let event else { continue }
                    if let answer = await onEvent(event), let replyID { await channel.reply(to: replyID, answer) }
                }
            }
            let result = await channel.request(request)
            // The events that came before the result are all handled before it is returned
            // (the group waits for its tasks): closing ends the stream of events.
            await channel.close()
            return result
        }
    }
}
