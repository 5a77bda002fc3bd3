import Synchronization

/// One connection to a peer agent that carries many fetches at once: the shell of a
/// ``FetchMultiplexer``. The hello has been exchanged; one reader hands each reply to the fetch it
/// belongs to, and any number of callers ``fetch(_:hello:peerName:)`` concurrently. `continued`
/// notices go on it as plain frames.
///
/// The reader is either ``run()`` (a connection opened for fetches, ``ContinuationClient``) or the
/// liveness connection's own, which passes the `reply` frames to ``received(_:)`` and reports the
/// end with ``readerEnded(_:)``: that connection carries pings, pongs and pushed advertisements
/// beside the fetches (docs/PROTOCOL.md, "One connection per pair").
///
/// At most ``maxRequestsOutstanding`` fetches are in flight at once; more wait for a slot (within
/// their deadline). The source serves as many at once, so it never stops reading the connection:
/// a `ping` behind the requests is read, and its `pong` written, at once.
public final class MultiplexedConnection: Sendable {
    /// The fetches in flight at once on one connection, at most: the number a source serves at
    /// once (``RequestSlots``), so that its reader never waits and pings are answered at once.
    public static let maxRequestsOutstanding = 64

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
        /// Replaced by another connection to the same peer: no new fetch; closed once idle.
        var retiring = false
    }

    private let state: Mutex<State>
    private let outstanding = RequestSlots(capacity: MultiplexedConnection.maxRequestsOutstanding)

    /// Wraps `connection`, whose hello exchange agreed on multiplexing; replies are checked
    /// against `limits`.
    public init(connection: any FrameConnection, limits: FrameLimits) {
        self.connection = connection
        self.state = Mutex(State(machine: FetchMultiplexer(limits: limits)))
    }

    /// Whether new fetches may start on the connection.
    public var isOpen: Bool { state.withLock { $0.machine.isOpen && !$0.retiring } }

    /// The fetches in flight.
    public var inFlight: Int { state.withLock { $0.machine.inFlight } }

    /// Reads until the connection ends, handing out the answers; then ends every fetch still in
    /// flight (``FetchMultiplexer/ended(_:)``) and closes the connection. A retired connection
    /// (``retire()``) ends once its last fetch has.
    public func run() async {
        var failure: (any Error)?
        do {
            while let frame = try await connection.receive() {
                guard received(frame), !state.withLock({ $0.retiring && $0.machine.inFlight == 0 }) else { break }
            }
        } catch {
            failure = error
        }
        await connection.close()
        readerEnded(failure)
    }

    /// A frame the reader read: hands out the answers it finished. False when the connection must
    /// end (a frame that is not a `reply`, or a malformed one): the reader closes it.
    public func received(_ frame: Frame) -> Bool {
        let (done, open) = state.withLock { s in (Self.hand(s.machine.received(frame), &s), s.machine.isOpen) }
        for (waiter, completion) in done { waiter.resume(returning: completion) }
        return open
    }

    /// The reader found the connection closed (`failure` nil) or broken: every fetch in flight
    /// ends (``FetchMultiplexer/ended(_:)``: one with no answer yet is made again elsewhere).
    public func readerEnded(_ failure: (any Error)?) {
        let done = state.withLock { s in Self.hand(s.machine.ended(failure), &s) }
        for (waiter, completion) in done { waiter.resume(returning: completion) }
    }

    /// No new fetch starts here (another connection to the peer took over); those in flight
    /// finish. True when none is in flight: the caller closes it now; otherwise ``run()`` closes
    /// it after the last.
    public func retire() -> Bool {
        state.withLock { s in
            s.retiring = true
            return s.machine.inFlight == 0
        }
    }

    /// Fetches one activity on this connection. Nil when the caller was cancelled (its deadline
    /// passed, say): the answer, if it comes, is dropped. ``FetchMultiplexer/Completion/retry``
    /// when the connection had ended, or ended before any answer.
    public func fetch(_ request: FetchRequest, hello: PeerHello, peerName: String) async -> FetchMultiplexer.Completion? {
        guard await outstanding.acquireUnlessCancelled() else { return nil }
        defer { outstanding.release() }
        let begun = state.withLock { s -> (id: UInt32, frame: Frame)? in
            s.retiring ? nil : s.machine.begin(request, hello: hello, peerName: peerName)
        }
        guard let (id, frame) = begun else { return .retry }
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
