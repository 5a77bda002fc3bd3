#if canImport(dnssd)
import dnssd
#else
import CDNSSD
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization

/// One `DNSServiceRef` (a registration, a browse, a resolve or a record query) and the dedicated
/// thread that owns it.
///
/// dns_sd delivers nothing unless `DNSServiceProcessResult` is called whenever the ref's socket
/// is readable, and Avahi's compat layer must not have its ref deallocated while
/// `DNSServiceProcessResult` runs. So every call on the ref happens on the operation's thread:
/// the thread creates the ref (`create`), polls its socket together with a self-pipe, calls
/// `DNSServiceProcessResult` when the socket is readable, runs work queued with `perform(_:)`,
/// and, when cancelled or failed, deallocates the ref before it exits.
///
/// Any error ends the operation: one returned by `create` or `DNSServiceProcessResult`, and one
/// delivered to a callback (with Avahi that means the daemon went away, or a resolve timed out;
/// either way the ref delivers nothing more). The owner restarts ended operations.
final class DNSServiceOperation: Sendable {
    /// Creates the ref on the operation's thread: calls e.g. `DNSServiceBrowse(ref, ..., context)`
    /// with the callback matching `replyHandler` and returns its result.
    typealias Create =
        @Sendable (_ ref: UnsafeMutablePointer<DNSServiceRef?>, _ context: UnsafeMutableRawPointer)
        -> DNSServiceErrorType

    /// Work to run on the operation's thread with its ref.
    typealias Work = @Sendable (DNSServiceRef) -> Void

    private enum Phase {
        case idle
        case running
        /// The thread has exited and the ref is deallocated; the error that ended it, nil if cancelled.
        case finished(DNSServiceError?)
    }

    private struct State {
        var phase: Phase = .idle
        var stopRequested = false
        var callbackError: DNSServiceError?
        var queuedWork: [Work] = []
        var waiters: [CheckedContinuation<DNSServiceError?, Never>] = []
    }

    /// The dns_sd call that creates the ref, for logs and errors, e.g. `"DNSServiceResolve"`.
    let name: String
    let replyHandler: DNSServiceReplyHandler
    private let create: Create
    private let onFinish: (@Sendable (DNSServiceError?) -> Void)?
    private let logger: Logger
    private let wakePipe: WakePipe?
    private let state = Mutex(State())

    /// - Parameters:
    ///   - name: the dns_sd call that `create` makes.
    ///   - replyHandler: receives successful replies, on the operation's thread.
    ///   - logger: logs (at debug) the error that ended the operation.
    ///   - onFinish: called once on the operation's thread after the ref is deallocated (or on the
    ///     caller's thread if the thread could not be started), with the error that ended the
    ///     operation or nil if it was cancelled.
    ///   - create: creates the ref.
    init(
        name: String,
        replyHandler: DNSServiceReplyHandler,
        logger: Logger,
        onFinish: (@Sendable (DNSServiceError?) -> Void)? = nil,
        create: @escaping Create
    ) {
        self.name = name
        self.replyHandler = replyHandler
        self.logger = logger
        self.onFinish = onFinish
        self.create = create
        self.wakePipe = WakePipe()
    }

    /// The operation whose unretained pointer a dns_sd callback got as its context.
    static func from(context: UnsafeMutableRawPointer?) -> DNSServiceOperation? {
        guard let context else { return nil }
        return Unmanaged<DNSServiceOperation>.fromOpaque(context).takeUnretainedValue()
    }

    /// Starts the thread. Only the first call does anything.
    func start() {
        let shouldStart = state.withLock { state -> Bool in
            guard case .idle = state.phase else { return false }
            state.phase = .running
            return true
        }
        guard shouldStart else { return }
        #if os(Linux)
        AvahiZeroingAllocator.installIfNeeded()
        #endif
        guard let wakePipe else {
            finish(DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): pipe()"))
            return
        }
        let started = DetachedThread.start(name: "dnssd-\(name.dropFirst("DNSService".count))") {
            self.runThread(wakePipe: wakePipe)
        }
        if !started {
            finish(DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): pthread_create"))
        }
    }

    /// Asks the thread to stop; it deallocates the ref and exits soon after. Idempotent; an
    /// operation cancelled before `start()` never creates its ref.
    func cancel() {
        state.withLock { $0.stopRequested = true }
        wakePipe?.wake()
    }

    /// Queues `work` to run on the operation's thread with its ref, after the ref is created.
    /// Returns false (and drops `work`) if the operation has already ended.
    @discardableResult
    func perform(_ work: @escaping Work) -> Bool {
        let queued = state.withLock { state -> Bool in
            if case .finished = state.phase { return false }
            if state.stopRequested { return false }
            state.queuedWork.append(work)
            return true
        }
        if queued { wakePipe?.wake() }
        return queued
    }

    /// Waits until the thread has deallocated the ref and exited. Returns the error that ended
    /// the operation, or nil if it was cancelled. The operation must have been started.
    func finished() async -> DNSServiceError? {
        await withCheckedContinuation { (continuation: CheckedContinuation<DNSServiceError?, Never>) in
            let result = state.withLock { state -> DNSServiceError?? in
                if case .finished(let error) = state.phase { return .some(error) }
                state.waiters.append(continuation)
                return .none
            }
            if case .some(let error) = result {
                continuation.resume(returning: error)
            }
        }
    }

    /// Called by the C callbacks (on the operation's thread) when dns_sd reports an error: the
    /// thread stops after the current `DNSServiceProcessResult`.
    func callbackFailed(_ error: DNSServiceError) {
        state.withLock { state in
            if state.callbackError == nil { state.callbackError = error }
        }
    }

    // MARK: - The operation's thread

    private func runThread(wakePipe: WakePipe) {
        if state.withLock({ $0.stopRequested }) {
            finish(nil)
            return
        }
        var ref: DNSServiceRef? = nil
        let context = Unmanaged.passUnretained(self).toOpaque()
        let result = create(&ref, context)
        guard result == DNSSDConstants.errNoError, let ref else {
            finish(DNSServiceError(code: result == DNSSDConstants.errNoError ? DNSSDConstants.errUnknown : result, operation: name))
            return
        }
        let outcome = pollLoop(ref: ref, wakePipe: wakePipe)
        DNSServiceRefDeallocate(ref)
        finish(outcome)
    }

    /// Polls until cancelled or failed; returns the error, or nil when cancelled.
    private func pollLoop(ref: DNSServiceRef, wakePipe: WakePipe) -> DNSServiceError? {
        let socket = DNSServiceRefSockFD(ref)
        guard socket >= 0 else {
            return DNSServiceError(code: DNSSDConstants.errUnknown, operation: "DNSServiceRefSockFD")
        }
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let (stop, error, work) = state.withLock { state -> (Bool, DNSServiceError?, [Work]) in
                defer { state.queuedWork = [] }
                return (state.stopRequested, state.callbackError, state.queuedWork)
            }
            if let error { return error }
            if stop { return nil }
            for item in work { item(ref) }

            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): poll() errno \(errno)")
            }
            if descriptors[1].revents != 0 {
                wakePipe.drain()
            }
            let events = descriptors[0].revents
            if events & Int16(POLLNVAL) != 0 {
                return DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): socket closed")
            }
            if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let result = DNSServiceProcessResult(ref)
                if result != DNSSDConstants.errNoError {
                    return DNSServiceError(code: result, operation: "DNSServiceProcessResult (\(name))")
                }
            }
        }
    }

    private func finish(_ error: DNSServiceError?) {
        if let error {
            logger.debug("dns_sd operation ended", metadata: ["dnssd.operation": "\(name)", "dnssd.error": "\(error)"])
        }
        let waiters = state.withLock { state -> [CheckedContinuation<DNSServiceError?, Never>] in
            state.phase = .finished(error)
            state.queuedWork = []
            defer { state.waiters = [] }
            return state.waiters
        }
        onFinish?(error)
        for waiter in waiters {
            waiter.resume(returning: error)
        }
    }
}
