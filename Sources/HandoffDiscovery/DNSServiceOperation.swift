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

/// One `DNSServiceRef` (a registration, a browse, a resolve or a record query), polled by its
/// owner's `DNSServicePoller`.
///
/// Avahi's compat layer must not have a ref deallocated while `DNSServiceProcessResult` runs on
/// it, so every call on the ref happens on the poller's thread: the poller creates the ref
/// (`open()` calls `create`), calls `DNSServiceProcessResult` when its socket is readable, runs
/// work queued with `perform(_:)`, and, when the operation is cancelled or failed, deallocates
/// the ref (`close(_:)`). Callbacks therefore also run on the poller's thread.
///
/// Any error ends the operation: one returned by `create` or `DNSServiceProcessResult`, and one
/// delivered to a callback (with Avahi that means the daemon went away, or a resolve timed out;
/// either way the ref delivers nothing more). The owner restarts ended operations.
final class DNSServiceOperation: PolledSource {
    /// Creates the ref on the poller's thread: calls e.g. `DNSServiceBrowse(ref, ..., context)`
    /// with the callback matching `replyHandler` and returns its result.
    typealias Create =
        @Sendable (_ ref: UnsafeMutablePointer<DNSServiceRef?>, _ context: UnsafeMutableRawPointer)
        -> DNSServiceErrorType

    /// Work to run on the poller's thread with the operation's ref.
    typealias Work = @Sendable (DNSServiceRef) -> Void

    private enum Phase {
        case idle
        case running
        /// The ref is deallocated (or was never created); the error that ended the operation, nil
        /// if it was cancelled.
        case finished(DNSServiceError?)
    }

    private struct State {
        var phase: Phase = .idle
        var stopRequested = false
        var callbackError: DNSServiceError?
        var queuedWork: [Work] = []
        var waiters: [CheckedContinuation<DNSServiceError?, Never>] = []
    }

    /// The dns_sd call that `create` makes, for logs and errors, e.g. `"DNSServiceResolve"`.
    let name: String
    let replyHandler: DNSServiceReplyHandler
    private let create: Create
    private let onFinish: (@Sendable (DNSServiceError?) -> Void)?
    private let logger: Logger
    private let poller: DNSServicePoller
    private let state = Mutex(State())
    /// The ref, between `open()` and `close(_:)`. Touched only on the poller's thread.
    private nonisolated(unsafe) var ref: DNSServiceRef?
    /// An error that ended the operation on the poller's thread. Touched only on that thread.
    private nonisolated(unsafe) var pollerError: DNSServiceError?

    /// - Parameters:
    ///   - name: the dns_sd call that `create` makes.
    ///   - poller: the thread that creates, polls and deallocates the ref.
    ///   - replyHandler: receives successful replies, on the poller's thread.
    ///   - logger: logs (at debug) the error that ended the operation.
    ///   - onFinish: called once after the ref is deallocated, on the poller's thread (or on the
    ///     caller's thread if the poller refused the operation), with the error that ended the
    ///     operation or nil if it was cancelled.
    ///   - create: creates the ref.
    init(
        name: String,
        poller: DNSServicePoller,
        replyHandler: DNSServiceReplyHandler,
        logger: Logger,
        onFinish: (@Sendable (DNSServiceError?) -> Void)? = nil,
        create: @escaping Create
    ) {
        self.name = name
        self.poller = poller
        self.replyHandler = replyHandler
        self.logger = logger
        self.onFinish = onFinish
        self.create = create
    }

    /// The operation whose unretained pointer a dns_sd callback got as its context.
    static func from(context: UnsafeMutableRawPointer?) -> DNSServiceOperation? {
        guard let context else { return nil }
        return Unmanaged<DNSServiceOperation>.fromOpaque(context).takeUnretainedValue()
    }

    /// Hands the operation to its poller, which creates the ref. Only the first call does anything.
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
        if !poller.add(self) {
            finish(DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): no poller thread"))
        }
    }

    /// Asks the poller to deallocate the ref soon. From then on no new `DNSServiceProcessResult`
    /// runs on the ref, so a callback that cancels an operation gets no more callbacks of it.
    /// Idempotent; an operation cancelled before `start()` never creates its ref.
    func cancel() {
        state.withLock { $0.stopRequested = true }
        poller.signal(self)
    }

    /// Queues `work` to run on the poller's thread with the ref, after the ref is created.
    /// Returns false (and drops `work`) if the operation has already ended.
    @discardableResult
    func perform(_ work: @escaping Work) -> Bool {
        let queued = state.withLock { state -> Bool in
            if case .finished = state.phase { return false }
            if state.stopRequested { return false }
            state.queuedWork.append(work)
            return true
        }
        if queued { poller.signal(self) }
        return queued
    }

    /// Waits until the ref is deallocated. Returns the error that ended the operation, or nil if
    /// it was cancelled. The operation must have been started.
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

    /// Starts the operation and waits until it ends; cancelling the calling task cancels it.
    /// Returns the error that ended it, or nil if it was cancelled.
    func run() async -> DNSServiceError? {
        start()
        return await withTaskCancellationHandler {
            await finished()
        } onCancel: {
            cancel()
        }
    }

    /// Called by the C callbacks (on the poller's thread) when dns_sd reports an error: the ref is
    /// deallocated after the current `DNSServiceProcessResult`.
    func callbackFailed(_ error: DNSServiceError) {
        state.withLock { state in
            if state.callbackError == nil { state.callbackError = error }
        }
    }

    // MARK: - PolledSource (on the poller's thread)

    func open() -> Int32? {
        if state.withLock({ $0.stopRequested }) { return nil }
        var created: DNSServiceRef? = nil
        let context = Unmanaged.passUnretained(self).toOpaque()
        let result = create(&created, context)
        guard result == DNSSDConstants.errNoError, let created else {
            let code = result == DNSSDConstants.errNoError ? DNSSDConstants.errUnknown : result
            pollerError = DNSServiceError(code: code, operation: name)
            return nil
        }
        ref = created
        let socket = DNSServiceRefSockFD(created)
        guard socket >= 0 else {
            pollerError = DNSServiceError(code: DNSSDConstants.errUnknown, operation: "DNSServiceRefSockFD")
            return nil
        }
        return socket
    }

    func signalled() -> Bool {
        let (stop, error, work) = state.withLock { state -> (Bool, DNSServiceError?, [Work]) in
            defer { state.queuedWork = [] }
            return (state.stopRequested, state.callbackError, state.queuedWork)
        }
        if error != nil || stop { return false }
        guard let ref else { return false }
        for item in work { item(ref) }
        return true
    }

    func descriptorReady(events: Int16) -> Bool {
        // A cancelled operation gets no more callbacks, even if its socket is readable.
        guard isLive, let ref else { return false }
        if events & Int16(POLLNVAL) != 0 {
            pollerError = DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): socket closed")
            return false
        }
        if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            let result = DNSServiceProcessResult(ref)
            if result != DNSSDConstants.errNoError {
                pollerError = DNSServiceError(code: result, operation: "DNSServiceProcessResult (\(name))")
                return false
            }
        }
        return isLive
    }

    func close(_ reason: PolledSourceEnd) {
        if let ref {
            DNSServiceRefDeallocate(ref)
            self.ref = nil
        }
        var error = pollerError ?? state.withLock { $0.callbackError }
        if error == nil, case .pollFailed(let code) = reason {
            error = DNSServiceError(code: DNSSDConstants.errUnknown, operation: "\(name): poll() errno \(code)")
        }
        finish(error)
    }

    /// Whether the operation has been neither cancelled nor failed in a callback.
    private var isLive: Bool {
        state.withLock { !$0.stopRequested && $0.callbackError == nil }
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
