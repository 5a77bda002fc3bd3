import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A client's connection to its local agent, shared by HandoffKit apps and the `handoff` CLI:
/// typed requests matched to their responses by `requestID` (``RequestCorrelator``), and the
/// agent's events in arrival order.
///
/// ``readFrames()`` must run (in a task of the caller's) for responses and events to arrive.
public final class ControlChannel: Sendable {
    private let connection: any FrameConnection
    private let responses = RequestCorrelator<Int, Result<JSONValue, HandoffError>>()
    private let nextRequestID = Atomic<Int>(1)
    /// Events from the agent, in order (with their `replyID`); finishes when the connection
    /// closes. An event this version does not know arrives as nil, with its `replyID`, so it can
    /// still be answered.
    public let events: AsyncStream<(event: AppEvent?, replyID: UUID?)>
    private let eventSink: AsyncStream<(event: AppEvent?, replyID: UUID?)>.Continuation

    /// A channel over an open connection to the agent: the control socket's
    /// (``connect(socketPath:hint:)``), or an in-memory one to an agent in the same process.
    public init(connection: any FrameConnection) {
        self.connection = connection
        (events, eventSink) = AsyncStream.makeStream(of: (event: AppEvent?, replyID: UUID?).self)
    }

    /// Connects to the agent at `socketPath` after checking who listens there
    /// (``ControlSocketConnector``). An unreachable agent is 4609; `hint` says what to do.
    public static func connect(socketPath: String,
                               hint: String = "Start handoffd, or set HANDOFF_SOCKET.") async throws(HandoffError) -> ControlChannel {
        ControlChannel(connection: try await openConnection(socketPath: socketPath, hint: hint))
    }

    /// Opens a checked connection to the agent's control socket (``ControlSocketConnector``); a
    /// refusal or an unreachable agent is 4609, with `hint` saying what to do.
    static func openConnection(socketPath: String, hint: String) async throws(HandoffError) -> any FrameConnection {
        do {
            return try await ControlSocketConnector.connect(path: socketPath, limits: ControlProtocol.limits)
        } catch let refused as ControlSocketError {
            throw .connectionUnavailable(refused.reason)
        } catch {
            throw .connectionUnavailable("no handoff agent answers at \(socketPath) (\(error)). \(hint)")
        }
    }

    /// Reads frames until the connection ends: responses complete their requests, events go to
    /// ``events``. A response without a `requestID` (the agent refusing the connection) answers
    /// every request.
    public func readFrames() async {
        var ended = HandoffError.connectionUnavailable("the connection to the handoff agent closed")
        while let frame = try? await connection.receive() {
            guard frame.kind == .controlResponse, let body = try? JSONValue(parsing: frame.payload) else {
                ended = .handoffFailed("the agent sent an invalid response")
                break
            }
            if AppEventMessage.isEvent(body) {
                eventSink.yield((AppEvent(json: body), AppEventMessage.replyID(of: body)))
                continue
            }
            let result = ControlProtocol.result(of: body)
            guard let id = body["requestID"]?.int64Value.map(Int.init) else {
                if case .failure(let refusal) = result { ended = refusal }
                continue
            }
            responses.resolve(id, with: result)
        }
        responses.close(answering: .failure(ended))
        eventSink.finish()
    }

    /// Sends a request and waits for its response.
    public func request(_ request: ControlRequest) async -> Result<JSONValue, HandoffError> {
        let id = nextRequestID.add(1, ordering: .relaxed).oldValue
        guard responses.open(id) else { return .failure(.connectionUnavailable("the connection to the handoff agent is closed")) }
        guard case .object(var body) = request.json else { preconditionFailure("a request is a JSON object") }
        body["requestID"] = .integer(Int64(id))
        do {
            try await connection.send([Frame(kind: .controlRequest, payload: JSONValue.object(body).serializedBytes)])
        } catch {
            // The agent may have refused the connection and closed it before reading: its
            // refusal, or the end of the connection, answers the request (readFrames).
        }
        return await responses.answer(for: id)
    }

    /// Answers an event that carried `replyID`.
    public func reply(to replyID: UUID, _ reply: AppReply) async {
        _ = await request(.reply(replyID: replyID, reply))
    }

    /// Closes the connection; ``readFrames()`` then ends.
    public func close() async { await connection.close() }
}
