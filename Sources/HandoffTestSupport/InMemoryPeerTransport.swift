import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// An in-memory implementation of HandoffCore's `PeerConnector` and `FrameConnection`, for tests of
// `ContinuationClient` without sockets. The source end of a connection runs the real
// `SourceSessionStateMachine` against an `InMemoryActivityTable`, and every byte that crosses the
// connection goes through a `FrameParser`, so frames are refused by header exactly as on TCP.

/// The activities a simulated source agent holds, by ID.
public final class InMemoryActivityTable: Sendable {
    private let activities: Mutex<[UUID: Activity]>

    /// Creates a table holding `activities`.
    public init(_ activities: [Activity] = []) {
        self.activities = Mutex(Dictionary(activities.map { ($0.id, $0) }, uniquingKeysWith: { _, new in new }))
    }

    /// Holds `activity` (replacing one with the same ID), as when an app makes it current.
    public func offer(_ activity: Activity) {
        activities.withLock { $0[activity.id] = activity }
    }

    /// Stops holding the activity with `id`, as when an app resigns it.
    public func resign(_ id: UUID) {
        _ = activities.withLock { $0.removeValue(forKey: id) }
    }

    /// The held activity with `id`, or nil.
    public func activity(id: UUID) -> Activity? {
        activities.withLock { $0[id] }
    }
}

/// Errors the in-memory transport itself raises.
public enum InMemoryTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connector was told to refuse connections.
    case connectionRefused(PeerEndpoint)
    /// A frame was sent on a connection this side had already closed.
    case sendOnClosedConnection
    /// A connect held with ``InMemoryConnector/Behavior/hangUntilReleased`` was released.
    case released

    public var description: String {
        switch self {
        case .connectionRefused(let endpoint): "connection refused by \(endpoint)"
        case .sendOnClosedConnection: "send on a closed connection"
        case .released: "connect released by the test"
        }
    }
}

/// The far (source) end of an in-memory connection: what it runs and how it misbehaves.
///
/// By default it is a well-behaved source agent: it runs a `SourceSessionStateMachine` with
/// `hello`, looks fetched activities up in `table` at time `now`, and sends every frame the state
/// machine produces. The knobs make it misbehave in the ways a test needs.
public struct InMemorySource: Sendable {
    /// The activities the source holds; nil for a source that runs no agent logic at all (it only
    /// sends ``initialBytes``).
    public var table: InMemoryActivityTable?
    /// The source agent's hello.
    public var hello: PeerHello
    /// The time the source checks expiration against.
    public var now: Date
    /// The limits the source applies to frames from the client.
    public var limits: FrameLimits
    /// Raw bytes the source sends as soon as the connection opens, before anything else.
    public var initialBytes: [UInt8]
    /// Send at most this many frames of the state machine's output; hold the rest back forever
    /// (until the connection is closed). `0` means the source never answers. Nil: no limit.
    public var holdBackAfterFrames: Int?
    /// Close the connection after sending this many frames of the state machine's output
    /// (`0`: right after ``initialBytes``). Nil: only close when the state machine says so.
    public var closeAfterFrames: Int?
    /// Replaces the bytes of each frame the source sends (to corrupt it, for example). Nil: the
    /// frame's own bytes.
    public var rewrite: (@Sendable (Frame) -> [UInt8])?

    /// A source with every knob spelled out; see the properties.
    public init(
        table: InMemoryActivityTable?,
        hello: PeerHello = InMemorySource.defaultHello,
        now: Date = InMemorySource.defaultNow,
        limits: FrameLimits = FrameLimits(),
        initialBytes: [UInt8] = [],
        holdBackAfterFrames: Int? = nil,
        closeAfterFrames: Int? = nil,
        rewrite: (@Sendable (Frame) -> [UInt8])? = nil
    ) {
        self.table = table
        self.hello = hello
        self.now = now
        self.limits = limits
        self.initialBytes = initialBytes
        self.holdBackAfterFrames = holdBackAfterFrames
        self.closeAfterFrames = closeAfterFrames
        self.rewrite = rewrite
    }

    /// The hello of the simulated source agent unless a test gives another.
    public static let defaultHello = PeerHello(agentID: "source-agent-id", name: "Source")
    /// The source's clock reading unless a test gives another: 2027-01-15 08:00:00 UTC.
    public static let defaultNow = Date(timeIntervalSince1970: 1_800_000_000)

    /// A well-behaved source agent holding the activities in `table`.
    public static func agent(_ table: InMemoryActivityTable, hello: PeerHello = defaultHello, now: Date = defaultNow) -> InMemorySource {
        InMemorySource(table: table, hello: hello, now: now)
    }

    /// A peer that runs no agent logic: it sends `bytes` when the connection opens, then closes
    /// the connection if `thenClose` (else it stays silent).
    public static func raw(_ bytes: [UInt8], thenClose: Bool = false) -> InMemorySource {
        InMemorySource(table: nil, initialBytes: bytes, closeAfterFrames: thenClose ? 0 : nil)
    }

    /// A peer that runs no agent logic: it sends `frames` when the connection opens, then closes
    /// the connection if `thenClose` (else it stays silent).
    public static func frames(_ frames: [Frame], thenClose: Bool = false) -> InMemorySource {
        raw(frames.flatMap(\.bytes), thenClose: thenClose)
    }
}

/// The client end of an in-memory connection to an ``InMemorySource``.
///
/// Bytes from the source go through a `FrameParser` with the client's `FrameLimits`, so
/// ``receive()`` throws `FrameError.userInfoTooLarge` on an oversized userInfo header as a TCP
/// transport would. ``close()`` makes a pending or later ``receive()`` return nil.
public final class InMemoryFrameConnection: FrameConnection {
    /// The endpoint the connection was opened to.
    public let endpoint: PeerEndpoint
    private let source: InMemorySource
    private let state: Mutex<State>

    private struct State: Sendable {
        var toClient: FrameParser
        var toSource: FrameParser
        var machine: SourceSessionStateMachine
        var refused: FrameError?
        var closedLocally = false
        var closedByPeer = false
        var sourceStopped = false
        var framesFromClient: [Frame] = []
        var framesFromSource: [Frame] = []
        var heldBack: [Frame] = []
        var sourceCloseReasons: [String] = []
        var version: UInt64 = 0
        var nextWaiterID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    /// Opens a connection whose frames from the source are checked against `limits`.
    public init(endpoint: PeerEndpoint, limits: FrameLimits, source: InMemorySource) {
        self.endpoint = endpoint
        self.source = source
        var initial = State(
            toClient: FrameParser(limits: limits),
            toSource: FrameParser(limits: source.limits),
            machine: SourceSessionStateMachine(hello: source.hello)
        )
        initial.toClient.append(source.initialBytes)
        if source.closeAfterFrames == 0 { initial.closedByPeer = true }
        state = Mutex(initial)
    }

    // MARK: FrameConnection

    /// Delivers frames to the source, which answers at once (synchronously).
    ///
    /// - Throws: ``InMemoryTransportError/sendOnClosedConnection`` after ``close()``. Frames sent
    ///   after the source closed are dropped, as a TCP write into a closing socket may be.
    public func send(_ frames: [Frame]) async throws {
        let waiters = try state.withLock { s throws -> [CheckedContinuation<Void, Never>] in
            guard !s.closedLocally else { throw InMemoryTransportError.sendOnClosedConnection }
            for frame in frames {
                guard !s.closedByPeer else { break }
                s.framesFromClient.append(frame)
                s.toSource.append(frame.bytes)
                runSource(&s)
            }
            return Self.wake(&s)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The next frame from the source; nil once the source has closed (after its buffered frames)
    /// or this side has closed.
    ///
    /// - Throws: `FrameError` when a header is refused by the client's limits (and again on every
    ///   later call); `CancellationError` if the task is cancelled while waiting.
    public func receive() async throws -> Frame? {
        while true {
            let step: ReceiveStep = state.withLock { s in
                if s.closedLocally { return .end }
                if let refused = s.refused { return .refuse(refused) }
                do throws(FrameError) {
                    if let frame = try s.toClient.next() { return .frame(frame) }
                } catch {
                    s.refused = error
                    return .refuse(error)
                }
                if s.closedByPeer { return .end }
                return .wait(s.version)
            }
            switch step {
            case .frame(let frame): return frame
            case .refuse(let error): throw error
            case .end: return nil
            case .wait(let version): try await waitForChange(after: version)
            }
        }
    }

    /// Closes this side: a pending ``receive()`` returns nil, later sends throw.
    public func close() async {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.closedLocally = true
            return Self.wake(&s)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Closes the connection from the source's side, as an agent that stopped or dropped it:
    /// frames already sent can still be read, then ``receive()`` returns nil.
    public func closeFromSource() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.closedByPeer = true
            s.sourceStopped = true
            return Self.wake(&s)
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Inspection

    /// Every frame the client sent, in order (as the source received them).
    public var framesFromClient: [Frame] { state.withLock { $0.framesFromClient } }
    /// Every frame the source sent, in order (before any ``InMemorySource/rewrite``).
    public var framesFromSource: [Frame] { state.withLock { $0.framesFromSource } }
    /// The frames the source produced but held back (``InMemorySource/holdBackAfterFrames``).
    public var heldBackFrames: [Frame] { state.withLock { $0.heldBack } }
    /// Whether the client closed the connection.
    public var isClosedByClient: Bool { state.withLock { $0.closedLocally } }
    /// Whether the source closed the connection.
    public var isClosedBySource: Bool { state.withLock { $0.closedByPeer } }
    /// Why the source's state machine closed the connection, if it did.
    public var sourceCloseReasons: [String] { state.withLock { $0.sourceCloseReasons } }

    // MARK: Source side

    private enum ReceiveStep: Sendable {
        case frame(Frame)
        case refuse(FrameError)
        case end
        case wait(UInt64)
    }

    /// Feeds the bytes the source has received through its parser and state machine.
    private func runSource(_ s: inout State) {
        guard let table = source.table else { return }
        while !s.sourceStopped, !s.closedByPeer {
            let frame: Frame
            do throws(FrameError) {
                guard let next = try s.toSource.next() else { return }
                frame = next
            } catch {
                apply(s.machine.receiveFailed(error), table: table, &s)
                return
            }
            apply(s.machine.received(frame), table: table, &s)
        }
    }

    private func apply(_ action: SourceSessionStateMachine.Action, table: InMemoryActivityTable, _ s: inout State) {
        switch action {
        case .send(let frames):
            emit(frames, &s)
        case .lookUp(let request):
            let found = table.activity(id: request.activityID)
            apply(s.machine.lookedUp(found, request: request, now: source.now), table: table, &s)
        case .notifyContinued:
            break  // as the agent: noted, and the connection stays open for the next fetch
        case .openStreams, .receiveOpen, .pair, .exchangeKeys:
            s.sourceStopped = true
            s.closedByPeer = true
        case .sendAndClose(let frames, let reason):
            emit(frames, &s)
            s.sourceCloseReasons.append(reason)
            s.sourceStopped = true
            s.closedByPeer = true
        }
    }

    private func emit(_ frames: [Frame], _ s: inout State) {
        for frame in frames {
            guard !s.closedByPeer else { return }
            if let limit = source.holdBackAfterFrames, s.framesFromSource.count >= limit {
                s.heldBack.append(frame)
                continue
            }
            s.framesFromSource.append(frame)
            s.toClient.append(source.rewrite?(frame) ?? frame.bytes)
            if let limit = source.closeAfterFrames, s.framesFromSource.count >= limit {
                s.closedByPeer = true
            }
        }
    }

    // MARK: Waiting

    private static func wake(_ s: inout State) -> [CheckedContinuation<Void, Never>] {
        s.version &+= 1
        let waiters = Array(s.waiters.values)
        s.waiters.removeAll()
        return waiters
    }

    private func waitForChange(after version: UInt64) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiterID += 1
            return s.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.version != version || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
        try Task.checkCancellation()
    }
}

/// A `PeerConnector` whose behaviour each test chooses: refuse, hang, or connect to an
/// ``InMemorySource``.
public final class InMemoryConnector: PeerConnector {
    /// What ``connect(to:limits:)`` does.
    public enum Behavior: Sendable {
        /// Fail at once with this error (a refused connection, an unreachable host...).
        case fail(any Error)
        /// Never connect; throw `CancellationError` when the connecting task is cancelled (a
        /// host that drops SYNs, until the connect deadline cancels the attempt).
        case hangUntilCancelled
        /// Never connect, even when cancelled, until the test calls
        /// ``releasePendingConnects()``; then throw ``InMemoryTransportError/released``.
        case hangUntilReleased
        /// Connect to a simulated source.
        case source(InMemorySource)
    }

    private struct State: Sendable {
        var behavior: Behavior
        var attempts: [PeerEndpoint] = []
        var connections: [InMemoryFrameConnection] = []
        var nextPendingID: UInt64 = 0
        var pending: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state: Mutex<State>

    /// Creates a connector that behaves as `behavior`.
    public init(_ behavior: Behavior) {
        state = Mutex(State(behavior: behavior))
    }

    /// Creates a connector that connects to `source`.
    public convenience init(source: InMemorySource) {
        self.init(.source(source))
    }

    /// Changes what later connects do.
    public func setBehavior(_ behavior: Behavior) {
        state.withLock { $0.behavior = behavior }
    }

    /// Every endpoint a connect was attempted to, in order.
    public var attempts: [PeerEndpoint] { state.withLock { $0.attempts } }
    /// Every connection opened, in order.
    public var connections: [InMemoryFrameConnection] { state.withLock { $0.connections } }
    /// The number of connects currently hanging.
    public var pendingConnectCount: Int { state.withLock { $0.pending.count } }

    public func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        let behavior = state.withLock { s -> Behavior in
            s.attempts.append(endpoint)
            return s.behavior
        }
        switch behavior {
        case .fail(let error):
            throw error
        case .source(let source):
            let connection = InMemoryFrameConnection(endpoint: endpoint, limits: limits, source: source)
            state.withLock { $0.connections.append(connection) }
            return connection
        case .hangUntilCancelled:
            try await hang(cancellable: true)
            throw CancellationError()
        case .hangUntilReleased:
            try await hang(cancellable: false)
            throw InMemoryTransportError.released
        }
    }

    /// Ends every connect held by ``Behavior/hangUntilReleased`` (or still hanging until
    /// cancelled): each throws ``InMemoryTransportError/released``.
    public func releasePendingConnects() {
        let pending = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            defer { s.pending.removeAll() }
            return Array(s.pending.values)
        }
        for continuation in pending { continuation.resume(throwing: InMemoryTransportError.released) }
    }

    /// Waits (by yielding) until at least `count` connects are hanging.
    ///
    /// - Throws: ``ManualClock/WaitTimeout`` after `maximumYields` yields.
    public func waitForPendingConnects(count: Int, maximumYields: Int = 100_000) async throws {
        for _ in 0...maximumYields {
            if pendingConnectCount >= count { return }
            await Task.yield()
        }
        throw ManualClock.WaitTimeout(description: "InMemoryConnector: gave up after \(maximumYields) yields waiting for \(count) pending connect(s); \(pendingConnectCount) pending")
    }

    private func hang(cancellable: Bool) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextPendingID += 1
            return s.nextPendingID
        }
        let wait = {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelledAlready = self.state.withLock { s -> Bool in
                    if cancellable, Task.isCancelled { return true }
                    s.pending[id] = continuation
                    return false
                }
                if cancelledAlready { continuation.resume(throwing: CancellationError()) }
            }
        }
        if cancellable {
            try await withTaskCancellationHandler {
                try await wait()
            } onCancel: {
                let continuation = state.withLock { $0.pending.removeValue(forKey: id) }
                continuation?.resume(throwing: CancellationError())
            }
        } else {
            try await wait()
        }
    }
}
