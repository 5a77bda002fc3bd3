import Synchronization

/// One connection to a peer agent that carries many fetches at once: the shell of a
/// ``FetchMultiplexer``. The hello has been exchanged (``ContinuationClient`` opens it); one reader
/// (``run()``) hands each reply to the fetch it belongs to, and any number of callers
/// ``fetch(_:hello:peerName:)`` concurrently. `continued` notices go on it as plain frames.
public final class MultiplexedConnection: Sendable {
    /// The connection underneath.
    public let connection: any FrameConnection

    private struct State {
        var machine: FetchMultiplexer
        /// Callers waiting for their answer, by request ID.
        var waiters: [UInt32: CheckedContinuation<FetchMultiplexer.Completion?, Never>] = [:]
        /// Answers that came before their caller started waiting.
        var early: [UInt32: FetchMultiplexer.Completion] = [:]
        /// Requests whose callers were cancelled before they started waiting.
        var cancelled: Set<UInt32> = []
    }

    private let state: Mutex<State>

    /// Wraps `connection`, whose hello exchange agreed on multiplexing; replies are checked
    /// against `limits`.
    public init(connection: any FrameConnection, limits: FrameLimits) {
        self.connection = connection
        self.state = Mutex(State(machine: FetchMultiplexer(limits: limits)))
    }

    /// Whether new fetches may start on the connection.
    public var isOpen: Bool { state.withLock { $0.machine.isOpen } }

    /// The fetches in flight.
    public var inFlight: Int { state.withLock { $0.machine.inFlight } }

    /// Reads until the connection ends, handing out the answers; then ends every fetch still in
    /// flight (``FetchMultiplexer/ended(_:)``) and closes the connection.
    public func run() async {
        var failure: (any Error)?
        do {
            while let frame = try await connection.receive() {
                let (done, open) = state.withLock { s in (Self.hand(s.machine.received(frame), &s), s.machine.isOpen) }
                for (waiter, completion) in done { waiter.resume(returning: completion) }
                if !open { break }
            }
        } catch {
            failure = error
        }
        let done = state.withLock { s in Self.hand(s.machine.ended(failure), &s) }
        await connection.close()
        for (waiter, completion) in done { waiter.resume(returning: completion) }
    }

    /// Fetches one activity on this connection. Nil when the caller was cancelled (its deadline
    /// passed, say): the answer, if it comes, is dropped. ``FetchMultiplexer/Completion/retry``
    /// when the connection had ended, or ended before any answer.
    public func fetch(_ request: FetchRequest, hello: PeerHello, peerName: String) async -> FetchMultiplexer.Completion? {
        guard let (id, frame) = state.withLock({ $0.machine.begin(request, hello: hello, peerName: peerName) }) else { return .retry }
        do {
            try await connection.send([frame])
        } catch {
            // Broken: the reader finds it closed and ends every fetch on it, this one with .retry.
            await connection.close()
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<FetchMultiplexer.Completion?, Never>) in
                let ready = state.withLock { s -> FetchMultiplexer.Completion?? in
                    if let done = s.early.removeValue(forKey: id) { return .some(done) }
                    if s.cancelled.remove(id) != nil { return .some(nil) }
                    s.waiters[id] = waiter
                    return nil
                }
                if let ready { waiter.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<FetchMultiplexer.Completion?, Never>? in
                s.machine.abandon(id)
                s.early.removeValue(forKey: id)
                guard let waiter = s.waiters.removeValue(forKey: id) else {
                    s.cancelled.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Sends frames that need no answer (a `continued` notice).
    public func send(_ frames: [Frame]) async throws {
        try await connection.send(frames)
    }

    /// Closes the connection: the fetches in flight end (``run()``).
    public func close() async {
        await connection.close()
    }

    /// Pairs finished requests with their waiters; keeps the answers no one waits for yet.
    private static func hand(_ finished: [(id: UInt32, completion: FetchMultiplexer.Completion)], _ s: inout State)
        -> [(CheckedContinuation<FetchMultiplexer.Completion?, Never>, FetchMultiplexer.Completion)] {
        var out: [(CheckedContinuation<FetchMultiplexer.Completion?, Never>, FetchMultiplexer.Completion)] = []
        for (id, completion) in finished {
            if let waiter = s.waiters.removeValue(forKey: id) {
                out.append((waiter, completion))
            } else if s.cancelled.remove(id) == nil {
                s.early[id] = completion
            }
        }
        return out
    }
}
