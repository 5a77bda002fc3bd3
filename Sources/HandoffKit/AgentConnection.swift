import HandoffCore
import HandoffTransport
import Synchronization

/// An app's connection to its local agent: requests matched to responses by `requestID`, and
/// the agent's events in arrival order.
final class AgentConnection: Sendable {
    private let connection: any FrameConnection
    private let state = Mutex(State())
    /// Events from the agent, in order; finishes when the connection closes.
    let events: AsyncStream<JSONValue>
    private let eventSink: AsyncStream<JSONValue>.Continuation

    private struct State {
        var nextRequestID = 1
        /// Requests sent, waiting for their response.
        var pending: [Int: CheckedContinuation<Result<JSONValue, HandoffError>, Never>] = [:]
        /// Requests sent whose response came before the caller started waiting.
        var early: [Int: Result<JSONValue, HandoffError>] = [:]
        var open: Set<Int> = []
        var closed = false
    }

    init(connection: any FrameConnection) {
        self.connection = connection
        (events, eventSink) = AsyncStream.makeStream(of: JSONValue.self)
    }

    static func connect(socketPath: String) async throws(HandoffError) -> AgentConnection {
        do {
            return AgentConnection(connection: try await ControlSocketConnector.connect(path: socketPath, limits: ControlProtocol.limits))
        } catch let refused as ControlSocketError {
            throw .connectionUnavailable(refused.reason)
        } catch {
            throw .connectionUnavailable("no handoff agent answers at \(socketPath) (\(error)). Start handoffd, or set HANDOFF_SOCKET.")
        }
    }

    /// Reads frames until the connection ends: responses complete their requests, events go to
    /// ``events``.
    func readFrames() async {
        while let frame = try? await connection.receive() {
            guard let body = try? JSONValue(parsing: frame.payload) else { continue }
            if body["event"] != nil {
                eventSink.yield(body)
                continue
            }
            guard let id = body["requestID"]?.int64Value.map(Int.init) else { continue }
            let result: Result<JSONValue, HandoffError>
            if let ok = body["ok"] {
                result = .success(ok)
            } else {
                let error = body["error"]
                result = .failure(HandoffError(HandoffError.Code(rawValue: Int(error?["code"]?.int64Value ?? 4608)),
                                               error?["message"]?.stringValue ?? "the agent sent an error without a message"))
            }
            let waiter = state.withLock { s -> CheckedContinuation<Result<JSONValue, HandoffError>, Never>? in
                guard s.open.remove(id) != nil else { return nil }
                if let waiter = s.pending.removeValue(forKey: id) { return waiter }
                s.early[id] = result
                return nil
            }
            waiter?.resume(returning: result)
        }
        let waiters = state.withLock { s in
            s.closed = true
            defer { s.pending = [:] }
            return Array(s.pending.values)
        }
        for waiter in waiters { waiter.resume(returning: .failure(.connectionUnavailable("the connection to the handoff agent closed"))) }
        eventSink.finish()
    }

    /// Sends a command and waits for its response.
    func request(_ command: String, _ arguments: [String: JSONValue] = [:]) async -> Result<JSONValue, HandoffError> {
        let id: Int? = state.withLock { s in
            guard !s.closed else { return nil }
            defer { s.nextRequestID += 1 }
            s.open.insert(s.nextRequestID)
            return s.nextRequestID
        }
        guard let id else { return .failure(.connectionUnavailable("the connection to the handoff agent is closed")) }
        var body = arguments
        body["requestID"] = .integer(id)
        body["command"] = .string(command)
        do {
            try await connection.send([Frame(kind: .controlRequest, payload: JSONValue.object(body).serializedBytes)])
        } catch {
            state.withLock { _ = $0.open.remove(id) }
            return .failure(.connectionUnavailable("cannot reach the handoff agent: \(error)"))
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONValue, HandoffError>, Never>) in
            let ready: Result<JSONValue, HandoffError>? = state.withLock { s in
                if let early = s.early.removeValue(forKey: id) { return early }
                if s.closed { return .failure(.connectionUnavailable("the connection to the handoff agent closed")) }
                s.pending[id] = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    func close() async { await connection.close() }
}
