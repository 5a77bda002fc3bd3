import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
        case .lookUpTagged(let id, let request):
            let answer = s.machine.answer(table.activity(id: request.activityID), request: request, now: source.now)
            emit(answer.map { TaggedFrame(id: id, frame: $0).wrapped(as: .reply) }, &s)
        case .notifyContinued:
            break  // as the agent: noted, and the connection stays open for the next fetch
        case .openStreams, .receiveOpen, .receiveFiles, .pair, .exchangeKeys, .subscribeAdvertisements, .announced, .saidGoodbye, .search, .serveClipboard,
             .forwardToWatcher, .takeKeys:
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
