import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
