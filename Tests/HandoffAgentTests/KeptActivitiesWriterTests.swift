import Dispatch
import Foundation
import HandoffCore
import Synchronization
import Testing

@testable import HandoffAgent

/// The kept activities' file is written off the agent's actor (``KeptActivitiesWriter``): in
/// order, the newest snapshot winning, durable when a caller is answered, and nothing left
/// unwritten at exit.
@Suite("KeptActivitiesWriter")
struct KeptActivitiesWriterTests {
    /// A write that records each snapshot and can be held at its start: the first write waits for
    /// `release()` once `holdFirst` is set, after saying on `entered` that it started.
    final class GatedWrite: Sendable {
        let writes = Mutex<[[Activity]]>([])
        let gate = DispatchSemaphore(value: 0)
        let holdFirst: Bool
        let entered: AsyncStream<Void>
        private let enter: AsyncStream<Void>.Continuation

        init(holdFirst: Bool) {
            self.holdFirst = holdFirst
            (entered, enter) = AsyncStream.makeStream(of: Void.self)
        }

        func write(_ activities: [Activity]) throws(HandoffError) {
            let first = writes.withLock { $0.isEmpty }
            enter.yield()
            if first, holdFirst { gate.wait() }
            writes.withLock { $0.append(activities) }
        }

        func release() { gate.signal() }
    }

    static func writer(_ gated: GatedWrite, loaded: [Activity] = []) -> KeptActivitiesWriter {
        KeptActivitiesWriter(loaded: loaded, logger: quietLogger) { activities throws(HandoffError) in try gated.write(activities) }
    }

    @Test("snapshots submitted while one is written are coalesced: the newest is written next, never an older one after it")
    func newestWins() async throws {
        let gated = GatedWrite(holdFirst: true)
        let writer = Self.writer(gated)
        let a = Sample.activity(1), b = Sample.activity(2), c = Sample.activity(3)
        let first = try #require(writer.submit([a]))
        var entered = gated.entered.makeAsyncIterator()
        _ = await entered.next()  // the first write has started, and waits
        let second = try #require(writer.submit([a, b]))
        let third = try #require(writer.submit([a, b, c]))
        gated.release()
        await writer.written(first)
        await writer.written(second)
        await writer.written(third)
        #expect(gated.writes.withLock { $0 } == [[a], [a, b, c]])
    }

    @Test("flush returns only once the last snapshot submitted is written")
    func flushWritesTheLast() async throws {
        let gated = GatedWrite(holdFirst: true)
        let writer = Self.writer(gated)
        let a = Sample.activity(1), b = Sample.activity(2)
        _ = try #require(writer.submit([a]))
        var entered = gated.entered.makeAsyncIterator()
        _ = await entered.next()
        _ = try #require(writer.submit([b]))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await writer.flush() }
            gated.release()
        }
        #expect(gated.writes.withLock { $0 } == [[a], [b]])
        await writer.flush()  // nothing pending: at once
    }

    @Test("what the file holds already is not written again; a change back to it after another is")
    func unchangedIsNotWritten() async throws {
        let gated = GatedWrite(holdFirst: false)
        let a = Sample.activity(1), b = Sample.activity(2)
        let writer = Self.writer(gated, loaded: [a])
        #expect(writer.submit([a]) == nil)
        await writer.written(try #require(writer.submit([a, b])))
        await writer.written(try #require(writer.submit([a])))
        #expect(writer.submit([a]) == nil)
        #expect(gated.writes.withLock { $0 } == [[a, b], [a]])
    }

    @Test("a write that fails is logged and changes nothing; the same snapshot is written again when submitted again")
    func failedWrite() async throws {
        let failures = Mutex(1)
        let written = Mutex<[[Activity]]>([])
        let writer = KeptActivitiesWriter(loaded: [], logger: quietLogger) { activities throws(HandoffError) in
            let fail = failures.withLock { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            if fail { throw .handoffFailed("disk full") }
            written.withLock { $0.append(activities) }
        }
        let a = Sample.activity(1)
        await writer.written(try #require(writer.submit([a])))
        #expect(written.withLock { $0 }.isEmpty)
        await writer.written(try #require(writer.submit([a]), "the file does not hold it: written again"))
        #expect(written.withLock { $0 } == [[a]])
    }

    #if os(Linux)
    /// The writer's own thread yields the CPU to everything else: its scheduling policy is
    /// SCHED_IDLE, set by the writer on that thread (not on the caller's, not on a test's pool).
    @Test("writes run on the writer's own thread, at SCHED_IDLE")
    func writesRunAtIdlePriority() async {
        let policy = Mutex<Int32?>(nil)
        let writer = KeptActivitiesWriter(loaded: [], logger: quietLogger) { _ throws(HandoffError) in
            policy.withLock { $0 = sched_getscheduler(0) }
        }
        let submission = writer.submit([Sample.activity(1)])
        if let submission { await writer.written(submission) }
        let schedIdle: Int32 = 5  // SCHED_IDLE, <linux/sched.h> (Glibc shows it only to C with _GNU_SOURCE)
        #expect(policy.withLock { $0 } == schedIdle)
        #expect(sched_getscheduler(0) != schedIdle, "the caller's thread is left alone")
    }
    #endif
}
