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
}
