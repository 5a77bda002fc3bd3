import Testing

@testable import HandoffAgent

@Suite("BackgroundWork", .timeLimit(.minutes(1)))
struct BackgroundWorkTests {
    @Test("work submitted before the service runs waits for it, then runs and answers")
    func runsOnceStarted() async {
        let work = BackgroundWork()
        async let answer = work.perform({ 42 }, ifStopped: { -1 })
        let service = Task { try await work.run() }
        #expect(await answer == 42)
        service.cancel()
    }

    @Test("when the service stops, work never started gets its fallback, and later work too")
    func stoppedWork() async throws {
        let work = BackgroundWork()
        let service = Task { try await work.run() }
        service.cancel()
        try await service.value
        #expect(await work.perform({ 42 }, ifStopped: { -1 }) == -1)
        await confirmation { stopped in
            work.spawn({}, ifStopped: { stopped() })
        }
    }
}
