import HandoffCore
import Synchronization

/// One direction of an in-memory connection between two agents: the writer's frames as bytes,
/// read back through a `FrameParser` with the reader's `FrameLimits`, so that frames are refused
/// by header exactly as on TCP. One task reads at a time.
///
/// A byte budget (``limit(toBytes:)``) cuts the direction mid-frame, as a dropped TCP connection
/// does; the reader then gets ``InMemoryTransportError/truncatedFrame`` for the part it holds.
final class InMemoryFramePipe: Sendable {
    private struct State: Sendable {
        var parser: FrameParser
        var closed = false
        var refused: FrameError?
        var budget: Int?
        /// Counts writes and the close, so that a reader waits only when nothing changed.
        var version: UInt64 = 0
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>

    init(limits: FrameLimits) {
        state = Mutex(State(parser: FrameParser(limits: limits)))
    }

    /// Appends `frames`, up to the byte budget; false once the pipe is closed (nothing written).
    @discardableResult
    func write(_ frames: [Frame]) -> Bool {
        let (written, waiter) = state.withLock { s -> (Bool, CheckedContinuation<Void, Never>?) in
            guard !s.closed else { return (false, nil) }
            for frame in frames {
                var bytes = frame.bytes
                if let budget = s.budget {
                    if bytes.count >= budget {
                        bytes = Array(bytes.prefix(budget))
                        s.closed = true
                    }
                    s.budget = budget - bytes.count
                }
                s.parser.append(bytes)
                if s.closed { break }
            }
            s.version &+= 1
            defer { s.waiter = nil }
            return (true, s.waiter)
        }
        waiter?.resume()
        return written
    }

    /// Lets `bytes` more bytes through, then closes the pipe (mid-frame if one is being written).
    func limit(toBytes bytes: Int) {
        state.withLock { $0.budget = max(0, bytes) }
    }

    /// Ends the direction: the reader gets what was written, then the end.
    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.closed = true
            s.version &+= 1
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Whether the pipe is closed.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// The next frame; nil at the end.
    ///
    /// - Throws: `FrameError` for a frame the reader's limits refuse (and on every later call),
    ///   ``InMemoryTransportError/truncatedFrame`` when the pipe closed mid-frame,
    ///   `CancellationError` when the reading task is cancelled.
    func read() async throws -> Frame? {
        while true {
            var version: UInt64 = 0
            let step: Result<Frame?, any Error>? = state.withLock { s in
                version = s.version
                if let refused = s.refused { return .failure(refused) }
                do throws(FrameError) {
                    if let frame = try s.parser.next() { return .success(frame) }
                } catch {
                    s.refused = error
                    return .failure(error)
                }
                guard s.closed else { return nil }
                return s.parser.bufferedByteCount > 0 ? .failure(InMemoryTransportError.truncatedFrame) : .success(nil)
            }
            if let step { return try step.get() }
            try await waitForChange(after: version)
        }
    }

    private func waitForChange(after version: UInt64) async throws {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if Task.isCancelled || s.version != version { return true }
                    s.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s in defer { s.waiter = nil }; return s.waiter }
            waiter?.resume()
        }
        try Task.checkCancellation()
    }
}
