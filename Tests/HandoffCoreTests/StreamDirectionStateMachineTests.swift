import HandoffCore
import Testing

@Suite("StreamDirectionStateMachine: one relayed direction of a stream pair")
struct StreamDirectionStateMachineTests {
    @Test("stream data goes on; the sender's streamEnd goes on and completes the direction")
    func forwardAndEnd() {
        var machine = StreamDirectionStateMachine()
        #expect(machine.received(.streamData, payloadBytes: 65536) == .forward)
        #expect(machine.received(.streamData, payloadBytes: 0) == .forward)
        #expect(!machine.isEnded)
        #expect(machine.received(.streamEnd, payloadBytes: 0) == .end)
        #expect(machine.isEnded)
    }

    @Test("stream frames after the streamEnd are dropped")
    func afterEnd() {
        var machine = StreamDirectionStateMachine()
        _ = machine.received(.streamEnd, payloadBytes: 0)
        #expect(machine.received(.streamData, payloadBytes: 10) == .drop)
        #expect(machine.received(.streamEnd, payloadBytes: 0) == .drop)
        #expect(machine.isEnded)
    }

    @Test("any other frame is a protocol error, and nothing passes after it", arguments: [FrameKind.hello, .fetch, .userInfo, .error, .controlResponse, .streamOpen])
    func otherKinds(kind: FrameKind) {
        var machine = StreamDirectionStateMachine()
        #expect(machine.received(kind, payloadBytes: 3) == .fail(.unexpected(kind: kind, expecting: "stream data")))
        #expect(machine.received(.streamData, payloadBytes: 3) == .drop)
        #expect(machine.received(.streamEnd, payloadBytes: 0) == .drop)
        #expect(!machine.isEnded)
    }

    @Test("a non-stream frame after the streamEnd is still a protocol error")
    func otherKindAfterEnd() {
        var machine = StreamDirectionStateMachine()
        _ = machine.received(.streamEnd, payloadBytes: 0)
        #expect(machine.received(.hello, payloadBytes: 3) == .fail(.unexpected(kind: .hello, expecting: "stream data")))
    }

    @Test("stall fault: the budget's bytes go on, the frame that crosses it is cut, the rest (streamEnd too) is dropped")
    func stall() {
        var machine = StreamDirectionStateMachine(stallAfterBytes: 100)
        #expect(machine.received(.streamData, payloadBytes: 60) == .forward)
        #expect(machine.received(.streamData, payloadBytes: 60) == .forwardPrefix(40))
        #expect(machine.received(.streamData, payloadBytes: 60) == .drop)
        #expect(machine.received(.streamEnd, payloadBytes: 0) == .drop)
        #expect(!machine.isEnded, "the receiver waits until the sender's connection goes")
    }

    @Test("stall fault: a budget used up exactly drops the streamEnd too; a budget of 0 passes nothing")
    func stallEdges() {
        var exact = StreamDirectionStateMachine(stallAfterBytes: 10)
        #expect(exact.received(.streamData, payloadBytes: 10) == .forward)
        #expect(exact.received(.streamEnd, payloadBytes: 0) == .drop)
        var zero = StreamDirectionStateMachine(stallAfterBytes: 0)
        #expect(zero.received(.streamData, payloadBytes: 1) == .drop)
        #expect(zero.received(.streamEnd, payloadBytes: 0) == .drop)
    }

    @Test("stall fault: a stream shorter than the budget ends normally")
    func stallNotReached() {
        var machine = StreamDirectionStateMachine(stallAfterBytes: 1000)
        #expect(machine.received(.streamData, payloadBytes: 10) == .forward)
        #expect(machine.received(.streamEnd, payloadBytes: 0) == .end)
        #expect(machine.isEnded)
    }
}
