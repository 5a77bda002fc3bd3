import HandoffCore
import Testing

/// The stall fault (`faults.stallStreamAfterBytes`) in front of a relayed direction: what the
/// budget lets through is what the relay's ``StreamDirectionStateMachine`` then sees.
@Suite("StreamStallBudget: the stall fault on one relayed direction")
struct StreamStallBudgetTests {
    /// A direction with the stall fault, as the pipeline has it: the budget, then the relay.
    struct Stalled {
        var budget: StreamStallBudget
        var machine = StreamDirectionStateMachine()

        init(bytes: Int) { budget = StreamStallBudget(bytes: bytes) }

        /// What the budget did with the frame; what it let through went on to the relay.
        mutating func received(_ kind: FrameKind, payloadBytes: Int) -> StreamStallBudget.Action {
            let action = budget.received(kind, payloadBytes: payloadBytes)
            if action != .drop { _ = machine.received(kind) }
            return action
        }
    }

    @Test("stall fault: the budget's bytes go on, the frame that crosses it is cut, the rest (streamEnd too) is dropped")
    func stall() {
        var direction = Stalled(bytes: 100)
        #expect(direction.received(.streamData, payloadBytes: 60) == .pass)
        #expect(direction.received(.streamData, payloadBytes: 60) == .passPrefix(40))
        #expect(direction.received(.streamData, payloadBytes: 60) == .drop)
        #expect(direction.received(.streamEnd, payloadBytes: 0) == .drop)
        #expect(!direction.machine.isEnded, "the receiver waits until the sender's connection goes")
    }

    @Test("stall fault: a budget used up exactly drops the streamEnd too; a budget of 0 passes nothing")
    func stallEdges() {
        var exact = Stalled(bytes: 10)
        #expect(exact.received(.streamData, payloadBytes: 10) == .pass)
        #expect(exact.received(.streamEnd, payloadBytes: 0) == .drop)
        var zero = Stalled(bytes: 0)
        #expect(zero.received(.streamData, payloadBytes: 1) == .drop)
        #expect(zero.received(.streamEnd, payloadBytes: 0) == .drop)
        var negative = Stalled(bytes: -5)
        #expect(negative.received(.streamData, payloadBytes: 1) == .drop)
    }

    @Test("stall fault: a stream shorter than the budget ends normally")
    func stallNotReached() {
        var direction = Stalled(bytes: 1000)
        #expect(direction.received(.streamData, payloadBytes: 10) == .pass)
        #expect(direction.received(.streamEnd, payloadBytes: 0) == .pass)
        #expect(direction.machine.isEnded)
    }

    @Test("stall fault: other frames pass, used-up budget or not, so the relay still refuses them", arguments: [FrameKind.hello, .fetch, .controlResponse])
    func otherKindsPass(kind: FrameKind) {
        var direction = Stalled(bytes: 0)
        #expect(direction.received(kind, payloadBytes: 3) == .pass)
        #expect(direction.machine.received(.streamData) == .drop, "the relay failed on it")
    }
}
