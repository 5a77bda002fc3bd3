import CHandoffShims
import HandoffCore
import Logging
import NIOPosix
import Synchronization

/// Writes the activities kept for the next start (``PublishedActivitiesFile``) off the agent's
/// actor: the encoding and the write run on a thread of the writer's own at the lowest priority
/// (``writerPool``), neither holding the actor, nor the thread Swift's concurrency runs tasks on,
/// nor a core that the push of the same change needs.
///
/// - **Kept when answered**: the agent submits each snapshot (``submit(_:)``) on its actor, in
///   the order of its changes, and ``written(_:)`` returns once the file holds it or a newer one,
///   so `handoff publish` (and `resign`) answer only when the activity will outlive a restart or
///   a crash of the agent (not a power loss: ``PublishedActivitiesFile``), as when the agent
///   wrote the file itself; meanwhile the actor serves other requests.
/// - **In order, newest wins**: one write at a time; snapshots submitted while one is being
///   written are coalesced, and only the newest of them is written next. An older snapshot never
///   replaces a newer one.
/// - **Nothing lost at exit**: ``flush()`` waits until every snapshot submitted has been written
///   (handoffd calls it once its services have stopped).
///
/// A snapshot equal to what the file already holds is not written again. A write that fails is
/// logged; the agent runs on with the activities in memory, and the next change writes the whole
/// snapshot again.
final class KeptActivitiesWriter: Sendable {
    /// Writes a snapshot (``PublishedActivitiesFile/save(_:)``; a test's own in unit tests).
    typealias Write = @Sendable ([Activity]) throws(HandoffError) -> Void

    private struct State {
        /// What the file holds: the last snapshot written, or the one loaded at start.
        var written: [Activity]
        /// The newest snapshot not written yet.
        var pending: [Activity]?
        /// How many snapshots were submitted, and how many of them are written (or superseded).
        var submitted: UInt64 = 0
        var done: UInt64 = 0
        /// Whether a pool thread is writing (it writes until nothing is pending).
        var draining = false
        /// The callers waiting for a snapshot, by the count of submissions that must be done.
        var waiters: [(upTo: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>
    private let write: Write
    /// The pool the writes run on: ``writerPool`` unless a test gives its own.
    private let pool: NIOThreadPool?

    /// The writer's own thread, started at the first write (an agent that never publishes starts
    /// no thread), at the scheduling policy SCHED_IDLE (Linux; `handoff_make_thread_idle`): it
    /// runs when nothing else wants the CPU. A publish is pushed to connected peers before it is
    /// kept, and the write (encoding the activities and overwriting the older of the file's two
    /// slots, ``AlternatingFile``, mostly in the kernel; 0.3-0.4 ms of CPU less per write than a
    /// new file renamed over the old one on this kind of machine) would otherwise take a core
    /// from the push and from the peer that reads it. `handoff publish`
    /// still answers only once the file is written: under full load the write gets a small share
    /// of the CPU, never none, and the answer comes later (docs/BENCHMARKS.md, "The one-way
    /// message").
    static let writerPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        // The pool's one thread takes this first, before any write: set once, for its life.
        pool.submit { _ in _ = handoff_make_thread_idle() }
        return pool
    }()
    private let logger: Logger

    /// A writer of `file`, which holds `loaded` now.
    convenience init(file: PublishedActivitiesFile, loaded: [Activity], logger: Logger) {
        self.init(loaded: loaded, logger: logger) { activities throws(HandoffError) in try file.save(activities) }
    }

    /// A writer that writes with `write`, the file holding `loaded` now.
    init(loaded: [Activity], logger: Logger, pool: NIOThreadPool? = nil, write: @escaping Write) {
        state = Mutex(State(written: loaded))
        self.write = write
        self.pool = pool
        self.logger = logger
    }

    /// Has `activities` written, unless the file holds them already (nil then); returns what to
    /// wait for with ``written(_:)``. Synchronous, so that snapshots are submitted in the order of
    /// the agent's changes (an `async` call would hop off the actor first, and two could swap).
    func submit(_ activities: [Activity]) -> Submission? {
        let submitted = state.withLock { state -> (submission: Submission, start: Bool)? in
            if !state.draining, state.pending == nil, state.written == activities { return nil }
            state.submitted += 1
            state.pending = activities
            defer { state.draining = true }
            return (Submission(count: state.submitted), !state.draining)
        }
        guard let submitted else { return nil }
        // Also when a test's pool has stopped: the work then runs at once, on this thread.
        if submitted.start { (pool ?? Self.writerPool).submit { [self] _ in drain() } }
        return submitted.submission
    }

    /// One snapshot submitted: the how-many-th.
    struct Submission: Sendable, Equatable {
        var count: UInt64
    }

    /// Returns once the file holds the snapshot of `submission` or a newer one (or its write failed).
    func written(_ submission: Submission) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                guard state.done < submission.count else { return false }
                state.waiters.append((submission.count, continuation))
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Returns once every snapshot submitted so far is written (or its write failed).
    func flush() async {
        await written(Submission(count: state.withLock { $0.submitted }))
    }

    /// Writes the newest pending snapshot until none is pending; on one pool thread at a time.
    /// The writer stops draining in the same lock that marks its last snapshot done, so a caller
    /// that ``written(_:)`` has answered finds the writer idle, and a ``submit(_:)`` of what the
    /// file now holds is skipped.
    private func drain() {
        var next = state.withLock { Self.take(&$0) }
        while let snapshot = next {
            var wrote = snapshot.activities == snapshot.written
            if !wrote {
                do {
                    try write(snapshot.activities)
                    wrote = true
                } catch {
                    logger.warning("cannot keep the published activities for the next start", metadata: ["handoff.reason": "\(error.message)"])
                }
            }
            let ready: [CheckedContinuation<Void, Never>]
            (ready, next) = state.withLock { state in
                if wrote { state.written = snapshot.activities }
                state.done = snapshot.generation
                let ready = state.waiters.filter { $0.upTo <= snapshot.generation }.map(\.continuation)
                state.waiters.removeAll { $0.upTo <= snapshot.generation }
                return (ready, Self.take(&state))
            }
            for continuation in ready { continuation.resume() }
        }
    }

    /// The next snapshot to write (its generation, its activities, what the file holds), taking it
    /// from `state`; nil, and the writer no longer draining, when none is pending.
    private static func take(_ state: inout State) -> (generation: UInt64, activities: [Activity], written: [Activity])? {
        guard let pending = state.pending else {
            state.draining = false
            return nil
        }
        state.pending = nil
        return (state.submitted, pending, state.written)
    }
}
