import HandoffCore
import HandoffTransport
import Synchronization

/// One agent's relay of a pair of continuation streams: two directions (app to peer, peer to
/// app) over two connections, moved by their ``StreamSplice``s on the event loops, and watched by
/// the two sessions that joined them.
///
/// A direction ends cleanly when its sender's `streamEnd` has been passed on. Once both have, the
/// stream pair is complete and both connections are closed: without this, each agent waited for
/// the other to close, and every stream left two TCP connections open with their buffers (300
/// after 300 streams, and the continuing agent's RSS growing by about 1 MB per stream). When one
/// side goes away instead (its connection ends without `streamEnd`, or fails), nothing more can
/// pass either way, so both connections are closed at once and the other side sees the break.
final class StreamRelay: Sendable {
    private struct State {
        var endedDirections = 0
        var done = false
        var closers: [@Sendable () -> Void] = []
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Registers a connection's close; called at once when the relay is already done.
    func onDone(close: @escaping @Sendable () -> Void) {
        let closeNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.closers.append(close)
            return false
        }
        if closeNow { close() }
    }

    /// Records how one direction ended (nil: it failed).
    func directionEnded(_ end: StreamDirectionEnd?) {
        let finished = state.withLock { state -> (closers: [@Sendable () -> Void], waiters: [CheckedContinuation<Void, Never>])? in
            guard !state.done else { return nil }
            if end == .ended {
                state.endedDirections += 1
                guard state.endedDirections == 2 else { return nil }
            }
            state.done = true
            defer { state.closers = []; state.waiters = [] }
            return (state.closers, state.waiters)
        }
        guard let finished else { return }
        for close in finished.closers { close() }
        for waiter in finished.waiters { waiter.resume() }
    }

    /// Waits until both directions have ended, or one side has gone away. Cancelling the waiting
    /// task (the agent shutting down) ends the pair: both connections are closed.
    ///
    /// A served session is also cancelled when its own connection closes. Then the pair is not
    /// ended here (`ownConnectionClosed` is true): that connection's splice reports the end itself,
    /// once what it read, its `streamEnd` included, has gone out to the other side. (Ending the
    /// pair at once closed the other connection with that `streamEnd` still waiting to be
    /// written, when the other side was slower: an app that wrote its last bytes and closed lost
    /// them.)
    func waitUntilDone(ownConnectionClosed: @escaping @Sendable () -> Bool) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.done { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            if !ownConnectionClosed() { directionEnded(nil) }
        }
    }
}

/// Makes the agent's stream relays and counts the pairs being relayed (`handoff status`:
/// `streamPairs`): from the relay's creation until the session that owns it has returned, so its
/// connection is closed. The session calls ``finished()`` when it returns.
final class StreamRelays: Sendable {
    private let count = Mutex(0)

    /// Stream pairs relayed now.
    var open: Int { count.withLock { $0 } }

    /// A new relay, counted until ``finished()``.
    func make() -> StreamRelay {
        count.withLock { $0 += 1 }
        return StreamRelay()
    }

    /// The session that owned a relay has returned.
    func finished() {
        count.withLock { $0 -= 1 }
    }
}
