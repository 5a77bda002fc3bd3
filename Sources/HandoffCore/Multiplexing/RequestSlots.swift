import Synchronization

/// The cap on the requests a source serves at once on one multiplexed connection: a counting
/// semaphore whose waiters are served in order.
///
/// The session takes a slot before it reads on past a request and gives it back when the answer
/// is written, so at the cap it stops reading: later requests stay in the socket's buffers and,
/// once those are full, in the sender's (TCP's backpressure). Memory stays bounded by the cap
/// whatever the peer sends.
public final class RequestSlots: Sendable {
    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// How many requests may be served at once.
    public let capacity: Int
    private let state: Mutex<State>

    public init(capacity: Int) {
        precondition(capacity > 0, "a connection must serve at least one request")
        self.capacity = capacity
        self.state = Mutex(State(free: capacity))
    }

    /// Takes a slot, waiting while all are taken.
    public func acquire() async {
        if tryAcquire() { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.free > 0 {
                    s.free -= 1
                    return true
                }
                s.waiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Takes a slot if one is free.
    public func tryAcquire() -> Bool {
        state.withLock { s in
            guard s.free > 0 else { return false }
            s.free -= 1
            return true
        }
    }

    /// Gives a slot back: to the longest waiter, if any.
    public func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if !s.waiters.isEmpty { return s.waiters.removeFirst() }
            s.free = min(s.free + 1, capacity)
            return nil
        }
        next?.resume()
    }

    /// Slots taken now.
    public var inUse: Int { state.withLock { capacity - $0.free } }

    /// Requests waiting for a slot now.
    public var waiting: Int { state.withLock { $0.waiters.count } }
}
