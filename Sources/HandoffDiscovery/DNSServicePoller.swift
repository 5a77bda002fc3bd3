#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one thread that polls the sockets of all dns_sd refs of its owner (a `ServiceBrowser` or a
/// `ServiceAdvertiser`) and calls `DNSServiceProcessResult` for the readable ones.
///
/// dns_sd delivers nothing unless `DNSServiceProcessResult` is called whenever a ref's socket is
/// readable, and `poll()` blocks, so this work needs a thread of its own rather than the Swift
/// concurrency pool. Avahi's compat layer must not have a ref deallocated while
/// `DNSServiceProcessResult` runs on it; here every call on a ref (creating it, processing its
/// results, work queued for it, deallocating it) happens on this one thread, so they cannot race,
/// and callbacks run on this thread too.
///
/// The poller watches `PolledSource`s. It starts its thread with the first `add(_:)`, wakes it
/// through a self-pipe to take on added sources and to run signalled ones, and ends it with
/// `stop()`, which closes every source still polled (deallocating its ref) before the thread
/// exits. Each owner has its own poller, so stopping the owner frees its thread and refs, and a
/// burst of ref creations in the browser does not delay the advertiser's TXT updates.
final class DNSServicePoller: Sendable {
    private enum Phase {
        /// No thread yet; the first `add(_:)` starts it.
        case idle
        case running(WakePipe)
        /// `stop()` was called: the thread closes everything and exits; adds are refused.
        case stopped
    }

    private struct State {
        var phase: Phase = .idle
        /// Sources added since the thread last looked, in order.
        var added: [any PolledSource] = []
        /// Sources signalled since the thread last looked.
        var signalled: Set<ObjectIdentifier> = []
        var threadStarted = false
        /// Set once the thread has closed every source and is about to exit.
        var threadExited = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// A source the thread polls, with its descriptor.
    private struct Polled {
        var source: any PolledSource
        var descriptor: Int32
    }

    /// The thread's name (at most 15 bytes are kept on Linux).
    let threadName: String
    private let state = Mutex(State())

    /// - Parameter threadName: names the poller thread, e.g. `"dnssd-browser"`.
    init(threadName: String) {
        self.threadName = threadName
    }

    /// Hands `source` to the poller thread, which calls its `open()` soon, starting the thread if
    /// it is not running yet. Returns false if the poller has been stopped or the thread could not
    /// be started (no descriptors or threads left); no method of `source` is then called.
    /// Callable from any thread, also from a callback on the poller thread.
    func add(_ source: any PolledSource) -> Bool {
        let wakePipe = state.withLock { state -> WakePipe? in
            switch state.phase {
            case .stopped:
                return nil
            case .running(let wakePipe):
                state.added.append(source)
                return wakePipe
            case .idle:
                guard let wakePipe = WakePipe() else { return nil }
                let started = DetachedThread.start(name: threadName) { [self] in
                    run(wakePipe: wakePipe)
                }
                guard started else { return nil }
                state.phase = .running(wakePipe)
                state.threadStarted = true
                state.added.append(source)
                return wakePipe
            }
        }
        wakePipe?.wake()
        return wakePipe != nil
    }

    /// Wakes the poller thread to call `source.signalled()`, if the source is polled or about to
    /// be (a source already closed is ignored). Callable from any thread, also from a callback on
    /// the poller thread.
    func signal(_ source: any PolledSource) {
        let wakePipe = state.withLock { state -> WakePipe? in
            guard case .running(let wakePipe) = state.phase else { return nil }
            state.signalled.insert(ObjectIdentifier(source))
            return wakePipe
        }
        wakePipe?.wake()
    }

    /// Stops the poller: the thread closes every source (`close(.pollerStopped)`), deallocating
    /// their refs, and exits. Waits until it has. Later `add(_:)` calls are refused. Idempotent.
    func stop() async {
        let wakePipe = state.withLock { state -> WakePipe? in
            defer { state.phase = .stopped }
            guard case .running(let wakePipe) = state.phase else { return nil }
            return wakePipe
        }
        wakePipe?.wake()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if !state.threadStarted || state.threadExited { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: - The poller thread

    private func run(wakePipe: WakePipe) {
        var polled: [ObjectIdentifier: Polled] = [:]
        while true {
            let (added, signalled, stopping) = state.withLock {
                state -> ([any PolledSource], Set<ObjectIdentifier>, Bool) in
                defer {
                    state.added = []
                    state.signalled = []
                }
                if case .stopped = state.phase { return (state.added, state.signalled, true) }
                return (state.added, state.signalled, false)
            }
            if stopping {
                for source in added { source.close(.pollerStopped) }
                for entry in polled.values { entry.source.close(.pollerStopped) }
                break
            }
            var due = signalled
            for source in added {
                let id = ObjectIdentifier(source)
                guard let descriptor = source.open() else {
                    source.close(.ended)
                    continue
                }
                polled[id] = Polled(source: source, descriptor: descriptor)
                // Runs what was queued for the source before it was opened.
                due.insert(id)
            }
            for id in due {
                guard let entry = polled[id], !entry.source.signalled() else { continue }
                polled[id] = nil
                entry.source.close(.ended)
            }
            pollOnce(&polled, wakePipe: wakePipe)
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.threadExited = true
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until a descriptor or the wake pipe is ready, then hands each ready source its events.
    private func pollOnce(_ polled: inout [ObjectIdentifier: Polled], wakePipe: WakePipe) {
        let ids = Array(polled.keys)
        var descriptors = [pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0)]
        descriptors.reserveCapacity(ids.count + 1)
        for id in ids {
            descriptors.append(pollfd(fd: polled[id]!.descriptor, events: Int16(POLLIN), revents: 0))
        }
        let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
        if ready < 0 {
            let error = errno
            if error == EINTR { return }
            for entry in polled.values { entry.source.close(.pollFailed(errno: error)) }
            polled = [:]
            return
        }
        if descriptors[0].revents != 0 { wakePipe.drain() }
        for (index, id) in ids.enumerated() {
            let events = descriptors[index + 1].revents
            guard events != 0, let entry = polled[id] else { continue }
            if !entry.source.descriptorReady(events: events) {
                polled[id] = nil
                entry.source.close(.ended)
            }
        }
    }
}
