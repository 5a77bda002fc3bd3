import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import HandoffAgent

@Suite("BackgroundWork", .timeLimit(.minutes(1)))
struct BackgroundWorkTests {
    @Test("work submitted before the service runs waits for it, then runs")
    func runsOnceStarted() async {
        let work = BackgroundWork()
        let (ran, report) = AsyncStream.makeStream(of: String.self)
        work.spawn({ report.yield("ran") }, ifStopped: { report.yield("stopped") })
        let service = Task { try await work.run() }
        var iterator = ran.makeAsyncIterator()
        #expect(await iterator.next() == "ran")
        service.cancel()
    }

    @Test("when the service has stopped, work gets its fallback instead")
    func stoppedWork() async throws {
        let work = BackgroundWork()
        let service = Task { try await work.run() }
        service.cancel()
        try await service.value
        await confirmation { stopped in
            work.spawn({}, ifStopped: { stopped() })
        }
    }

    /// A service that runs until the group shuts down gracefully.
    struct UntilShutdown: Service {
        func run() async throws { try await gracefulShutdown() }
    }

    @Test("a graceful shutdown of the group ends the service, cancelling a job still running (handoffd stops on SIGTERM)")
    func gracefulShutdownEndsIt() async throws {
        let work = BackgroundWork()
        let cancelled = Atomic<Bool>(false)
        let started = Atomic<Bool>(false)
        work.spawn {
            started.store(true, ordering: .releasing)
            do { try await Task.sleep(for: .seconds(3600)) } catch { cancelled.store(true, ordering: .releasing) }
        }
        let group = ServiceGroup(configuration: .init(services: [.init(service: work), .init(service: UntilShutdown())],
                                                      logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            while !started.load(ordering: .acquiring) { await Task.yield() }
            await group.triggerGracefulShutdown()
            try await tasks.next()
        }
        let wasCancelled = cancelled.load(ordering: .acquiring)
        #expect(wasCancelled, "the job still running was cancelled")
        let answered = Atomic<Bool>(false)
        work.spawn({}, ifStopped: { answered.store(true, ordering: .releasing) })
        let told = answered.load(ordering: .acquiring)
        #expect(told, "a job submitted after the stop is told at once")
    }
}
