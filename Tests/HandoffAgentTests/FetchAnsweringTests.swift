import Foundation
import HandoffCore
import HandoffTestSupport
import Logging
import Synchronization
import Testing

@testable import HandoffAgent

/// Fault injection as a decorator of how fetches are answered (issue 16, item 4): each fault of
/// the plan acts in ``FaultyFetchAnswering`` alone, on top of an answering that records what
/// reached it. The whole path runs on hosts in FaultMatrixTests and HostFaultsOnHostsTests.
@Suite("Fault injection: FaultyFetchAnswering", .timeLimit(.minutes(1)))
struct FetchAnsweringTests {
    /// An answering that finds one activity and records what it was asked to send.
    final class Recording: FetchAnswering {
        let activity = Sample.activity(1, title: "Notes")
        let lookUps = Atomic<Int>(0)
        let sent = Mutex<[[Frame]]>([])
        /// The byte budgets the faulty answering set on the connection.
        let limited = Mutex<[Int]>([])
        var servesConnection: Bool { true }

        func lookUp(_ request: FetchRequest) async throws -> Result<(Activity, AppIdentity?)?, HandoffError> {
            lookUps.add(1, ordering: .relaxed)
            return .success((activity, nil))
        }

        func send(_ frames: [Frame], answering request: FetchRequest) async throws { sent.withLock { $0.append(frames) } }
    }

    static let request = FetchRequest(activityID: Sample.id(1), continuationID: UUID())
    static let answer = [PeerMessage.activity(Sample.activity(1, title: "Notes")).frame, PeerMessage.userInfo([:]).frame]

    func faulty(_ assignments: String..., base: Recording, clock: ManualClock = ManualClock()) throws -> FaultyFetchAnswering {
        var plan = FaultPlan()
        for assignment in assignments { try plan.apply(assignment: assignment) }
        return FaultyFetchAnswering(base: base, faults: plan, limitOutbound: { budget in base.limited.withLock { $0.append(budget) } }, clock: clock,
                                    logger: Logger(label: "unit", factory: { _ in SwiftLogNoOpLogHandler() }), remote: "test")
    }

    @Test("refuseConnections: the connection is not served")
    func refuse() throws {
        #expect(!(try faulty("refuseConnections=true", base: Recording())).servesConnection)
        #expect(try faulty("corruptFrame=true", base: Recording()).servesConnection)
    }

    @Test("advertiseGoneData: the activity is gone, and the agent is not asked")
    func gone() async throws {
        let base = Recording()
        let found = try await faulty("advertiseGoneData=true", base: base).lookUp(Self.request)
        guard case .success(let value) = found else { Issue.record("\(found)"); return }
        #expect(value == nil)
        #expect(base.lookUps.load(ordering: .relaxed) == 0)
    }

    @Test("payloadDelayMs: the answer waits exactly that long on the agent's clock")
    func delay() async throws {
        let clock = ManualClock()
        let answering = try faulty("payloadDelayMs=3000", base: Recording(), clock: clock)
        let lookUp = Task { try await answering.lookUp(Self.request) }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(2999))
        #expect(clock.sleeperCount == 1, "still waiting 1 ms before the delay")
        clock.advance(by: .milliseconds(1))
        guard case .success(let value)? = try? await lookUp.value else { Issue.record("no answer"); return }
        #expect(value?.0.id == Sample.id(1))
    }

    @Test("corruptFrame: only the activity frame's payload changes, every byte")
    func corrupt() async throws {
        let base = Recording()
        try await faulty("corruptFrame=true", base: base).send(Self.answer, answering: Self.request)
        let sent = try #require(base.sent.withLock { $0.first })
        #expect(sent.map(\.kind) == Self.answer.map(\.kind))
        #expect(zip(sent[0].payload, Self.answer[0].payload).allSatisfy { $0 == $1 ^ 0xA5 })
        #expect(sent[1] == Self.answer[1])
    }

    @Test("dropAfterBytes: the connection is limited before the answer goes out, which is otherwise unchanged")
    func drop() async throws {
        let base = Recording()
        try await faulty("dropAfterBytes=100", base: base).send(Self.answer, answering: Self.request)
        #expect(base.limited.withLock { $0 } == [100])
        #expect(base.sent.withLock { $0 } == [Self.answer])
    }

    @Test("faults that do not touch fetches leave the agent answering plainly")
    func plainWithoutFetchFaults() async throws {
        let agent = makeAgent()
        var plan = FaultPlan()
        try plan.apply(assignment: "stallStreamAfterBytes=10")
        #expect(!plan.touchesFetches)
        try plan.apply(assignment: "payloadDelayMs=1")
        #expect(plan.touchesFetches)
        #expect(await agent.faults == FaultPlan())
    }
}
