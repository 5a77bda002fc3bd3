import Synchronization

/// The cap on the requests served (by a source) or outstanding (from a continuing agent) at once
/// on one multiplexed connection: a counting semaphore whose waiters are served in order.
///
/// The session takes a slot before it reads on past a request and gives it back when the answer
/// is written, so at the cap it stops reading: later requests stay in the socket's buffers and,
/// once those are full, in the sender's (TCP's backpressure). Memory stays bounded by the cap
/// whatever the peer sends.
public final class RequestSlots: Sendable {
    private struct State {
        var free: Int
        var waiters: [(id: UInt64, waiter: CheckedContinuation<Bool, Never>)] = []
        var nextWaiter: UInt64 = 0
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
        _ = await wait(cancellable: false)
    }

    /// Takes a slot, waiting while all are taken; false, with no slot taken, when the calling
    /// task is cancelled first (a caller with a deadline).
    public func acquireUnlessCancelled() async -> Bool {
        await wait(cancellable: true)
    }

    private func wait(cancellable: Bool) async -> Bool {
        if tryAcquire() { return true }
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    if cancellable, Task.isCancelled { return false }
                    if s.free > 0 {
                        s.free -= 1
                        return true
                    }
                    s.waiters.append((id, waiter))
                    return nil
                }
                if let now { waiter.resume(returning: now) }
            }
        } onCancel: {
            guard cancellable else { return }
            let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: index).waiter
            }
            waiter?.resume(returning: false)
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
        let next = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            if !s.waiters.isEmpty { return s.waiters.removeFirst().waiter }
            s.free = min(s.free + 1, capacity)
            return nil
        }
        next?.resume(returning: true)
    }

    /// Slots taken now.
    public var inUse: Int { state.withLock { capacity - $0.free } }

    /// Requests waiting for a slot now.
    public var waiting: Int { state.withLock { $0.waiters.count } }
}
