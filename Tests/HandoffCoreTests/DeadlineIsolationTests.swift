import Dispatch
import HandoffCore
import HandoffTestSupport
import Testing

/// `Deadline.watch` runs its operation on the caller's actor, even an operation that names
/// nothing of the actor and only calls back into it (as the agent's `waitForAnswer` does with the
/// closure that registers a continuation). Swift 6.3 runs such a closure on the global executor
/// unless the code is written for it; handoffd then wrote its tables from two threads at once.
@Suite("Deadline.watch keeps the caller's isolation")
struct DeadlineIsolationTests {
    @Test("an operation that only calls back into the actor runs on the actor")
    func operationCallingBackRunsOnTheActor() async {
        let probe = IsolationProbe()
        #expect(await probe.watchCallingBack() == [true, true])
    }

    @Test("an operation that names the actor runs on the actor")
    func operationNamingTheActorRunsOnTheActor() async {
        let probe = IsolationProbe()
        #expect(await probe.watchNamingSelf() == true)
    }

    @Test("a nested watch keeps it too")
    func nestedWatchKeepsIt() async {
        let probe = IsolationProbe()
        #expect(await probe.nestedWatch() == true)
    }
}

/// An actor on a dispatch queue of its own, so that a test can ask, without trapping, whether
/// code runs on it.
private actor IsolationProbe {
    private let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private var seen: [Bool] = []

    private func record() { seen.append(executor.isCurrent) }

    private func calledBack(_ body: () -> Void) async {
        _ = await Deadline.watch(.seconds(60), on: ManualClock(), onExpiry: {}) {
            body()
            await Task.yield()
            body()
        }
    }

    func watchCallingBack() async -> [Bool] {
        seen = []
        await calledBack { record() }
        return seen
    }

    func watchNamingSelf() async -> Bool {
        await Deadline.watch(.seconds(60), on: ManualClock(), onExpiry: {}) { self.executor.isCurrent }.value
    }

    func nestedWatch() async -> Bool {
        let check = { self.executor.isCurrent }
        return await Deadline.watch(.seconds(60), on: ManualClock(), onExpiry: {}) {
            await Deadline.watch(.seconds(60), on: ManualClock(), onExpiry: {}) { check() }.value
        }.value
    }
}

/// A serial executor on a dispatch queue, which knows whether the current thread is running it.
private final class QueueExecutor: SerialExecutor {
    private let queue = DispatchQueue(label: "handoff.tests.isolation-probe")
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
