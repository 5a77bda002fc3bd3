import Foundation
import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("ContinuationCoordinator")
struct ContinuationCoordinatorTests {
    typealias Outcome = ContinuationCoordinator.Outcome
    let t0 = AgentInstant(sinceStart: .zero)
    let activity = Sample.id(1)

    static func delivered(_ by: String = "handler") -> Outcome {
        .success(ContinueResult(peer: "kitchen", continuationID: Sample.id(99), activity: .object([:]), by: by))
    }

    static func isStart(_ decision: ContinuationCoordinator.Decision, _ id: UUID) -> Bool {
        if case .start(id) = decision { return true }
        return false
    }

    static func isWait(_ decision: ContinuationCoordinator.Decision) -> Bool {
        if case .wait = decision { return true }
        return false
    }

    @Test("the first request starts a continuation; a second for the same activity waits and gets the same result")
    func concurrentRequestsShareOneRun() {
        var coordinator = ContinuationCoordinator()
        let first = UUID(), second = UUID()
        let r1 = coordinator.request(activity, idempotencyKey: nil, caller: first, now: t0)
        #expect(Self.isStart(r1, activity))
        let r2 = coordinator.request(activity, idempotencyKey: nil, caller: second, now: t0)
        #expect(Self.isWait(r2))
        #expect(coordinator.isRunning(activity))
        let answers = coordinator.finished(activity, outcome: Self.delivered(), handlerStarted: true, now: t0)
        #expect(answers.map(\.0) == [first, second])
        #expect(answers.allSatisfy { (try? $0.1.get().by) == "handler" })
        #expect(!coordinator.isRunning(activity))
        // Once finished, a new request runs again (no key: no idempotency).
        let r3 = coordinator.request(activity, idempotencyKey: nil, caller: UUID(), now: t0)
        #expect(Self.isStart(r3, activity))
    }

    @Test("a retry with the same key is answered from the first run, marked replayed, and runs nothing")
    func keyReplays() throws {
        var coordinator = ContinuationCoordinator()
        let caller = UUID()
        let r4 = coordinator.request(activity, idempotencyKey: "k", caller: caller, now: t0)
        #expect(Self.isStart(r4, activity))
        _ = coordinator.finished(activity, outcome: Self.delivered(), handlerStarted: true, now: t0)
        guard case .replay(let outcome) = coordinator.request(activity, idempotencyKey: "k", caller: UUID(), now: t0 + .seconds(5)) else {
            Issue.record("expected a replay")
            return
        }
        #expect(try outcome.get().replayed)
    }

    @Test("a retry while the keyed run still runs waits for it and gets its result, marked replayed")
    func keyWaitsForRun() throws {
        var coordinator = ContinuationCoordinator()
        let first = UUID(), retry = UUID()
        _ = coordinator.request(activity, idempotencyKey: "k", caller: first, now: t0)
        let r5 = coordinator.request(activity, idempotencyKey: "k", caller: retry, now: t0)
        #expect(Self.isWait(r5))
        let answers = coordinator.finished(activity, outcome: Self.delivered(), handlerStarted: true, now: t0)
        #expect(answers.map(\.0) == [first, retry])
        #expect(try answers[0].1.get().replayed == false)
        #expect(try answers[1].1.get().replayed == true)
    }

    @Test("a key used for another activity is refused")
    func keyConflict() {
        var coordinator = ContinuationCoordinator()
        _ = coordinator.request(activity, idempotencyKey: "k", caller: UUID(), now: t0)
        guard case .answer(.failure(let error)) = coordinator.request(Sample.id(2), idempotencyKey: "k", caller: UUID(), now: t0) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message.contains("use a fresh key"))
    }

    @Test("a run that failed before any handler started may be retried with the same key")
    func failureBeforeHandlerIsRetryable() {
        var coordinator = ContinuationCoordinator()
        _ = coordinator.request(activity, idempotencyKey: "k", caller: UUID(), now: t0)
        _ = coordinator.finished(activity, outcome: .failure(.connectionUnavailable("gone")), handlerStarted: false, now: t0)
        let r6 = coordinator.request(activity, idempotencyKey: "k", caller: UUID(), now: t0)
        #expect(Self.isStart(r6, activity))
    }

    @Test("a keyed caller that joined a run counts as having started a handler: its key is not run again")
    func joinerKeyIsNotRetryable() {
        var coordinator = ContinuationCoordinator()
        _ = coordinator.request(activity, idempotencyKey: nil, caller: UUID(), now: t0)
        let r7 = coordinator.request(activity, idempotencyKey: "joined", caller: UUID(), now: t0)
        #expect(Self.isWait(r7))
        _ = coordinator.finished(activity, outcome: .failure(.connectionUnavailable("gone")), handlerStarted: false, now: t0)
        guard case .replay = coordinator.request(activity, idempotencyKey: "joined", caller: UUID(), now: t0) else {
            Issue.record("expected the joined key to replay its failure")
            return
        }
    }
}

extension AgentInstant {
    static func + (lhs: AgentInstant, rhs: Duration) -> AgentInstant { lhs.advanced(by: rhs) }
}
