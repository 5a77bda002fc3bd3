import Synchronization

/// Matches answers to the requests waiting for them, by ID: the one correlator of the control
/// protocol. Apps and the CLI match responses to their requests by `requestID`
/// (``ControlChannel``); the agent matches apps' replies to its events by `replyID`.
///
/// A request is opened before it is sent, so an answer that arrives before anyone waits for it
/// is kept. Each request gets one answer: the first ``resolve(_:with:)``, or the answer
/// ``close(answering:)`` gives every request once the connection is gone.
public final class RequestCorrelator<ID: Hashable & Sendable, Answer: Sendable>: Sendable {
    private struct State {
        var open: Set<ID> = []
        var waiting: [ID: CheckedContinuation<Answer, Never>] = [:]
        var early: [ID: Answer] = [:]
        /// Set once closed: the answer of every request still open, and of any opened later.
        var closedWith: Answer?
    }

    private let state = Mutex(State())

    public init() {}

    /// Opens a request. False once closed (the request must not be sent).
    public func open(_ id: ID) -> Bool {
        state.withLock { s in
            guard s.closedWith == nil else { return false }
            s.open.insert(id)
            return true
        }
    }

    /// Waits for the answer to an opened request; at once if it came already, or if the
    /// correlator is closed. Call it once per request.
    public func answer(for id: ID) async -> Answer {
        await withCheckedContinuation { wait(for: id, $0) }
    }

    /// Hands `continuation` the answer to an opened request when it comes (at once if it came
    /// already). For callers that race the answer against a deadline of their own.
    public func wait(for id: ID, _ continuation: CheckedContinuation<Answer, Never>) {
        let ready: Answer? = state.withLock { s in
            if let early = s.early.removeValue(forKey: id) { return early }
            if let closed = s.closedWith { return closed }
            s.waiting[id] = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Delivers the answer to a request. False when no such request is open: unknown, or
    /// answered already.
    @discardableResult
    public func resolve(_ id: ID, with answer: Answer) -> Bool {
        let waiter: CheckedContinuation<Answer, Never>?? = state.withLock { s in
            guard s.open.remove(id) != nil else { return nil }
            if let waiter = s.waiting.removeValue(forKey: id) { return .some(waiter) }
            s.early[id] = answer
            return .some(nil)
        }
        guard let waiter else { return false }
        waiter?.resume(returning: answer)
        return true
    }

    /// Whether a request is open (sent and not answered).
    public func isOpen(_ id: ID) -> Bool { state.withLock { $0.open.contains(id) } }

    /// Answers every open request with `answer` and refuses new ones: the connection is gone.
    public func close(answering answer: Answer) {
        let waiters = state.withLock { s in
            guard s.closedWith == nil else { return [CheckedContinuation<Answer, Never>]() }
            s.closedWith = answer
            s.open = []
            defer { s.waiting = [:] }
            return Array(s.waiting.values)
        }
        for waiter in waiters { waiter.resume(returning: answer) }
    }
}
