import HandoffCore
import Testing

@Suite("StreamDirectionStateMachine: one relayed direction of a stream pair")
struct StreamDirectionStateMachineTests {
    @Test("stream data goes on; the sender's streamEnd goes on and completes the direction")
    func forwardAndEnd() {
        var machine = StreamDirectionStateMachine()
        #expect(machine.received(.streamData) == .forward)
        #expect(machine.received(.streamData) == .forward)
        #expect(!machine.isEnded)
        #expect(machine.received(.streamEnd) == .end)
        #expect(machine.isEnded)
    }

    @Test("stream frames after the streamEnd are dropped")
    func afterEnd() {
        var machine = StreamDirectionStateMachine()
        _ = machine.received(.streamEnd)
        #expect(machine.received(.streamData) == .drop)
        #expect(machine.received(.streamEnd) == .drop)
        #expect(machine.isEnded)
    }

    @Test("any other frame is a protocol error, and nothing passes after it", arguments: [FrameKind.hello, .fetch, .userInfo, .error, .controlResponse, .streamOpen])
    func otherKinds(kind: FrameKind) {
        var machine = StreamDirectionStateMachine()
        #expect(machine.received(kind) == .fail(.unexpected(kind: kind, expecting: "stream data")))
        #expect(machine.received(.streamData) == .drop)
        #expect(machine.received(.streamEnd) == .drop)
        #expect(!machine.isEnded)
    }

    @Test("a non-stream frame after the streamEnd is still a protocol error")
    func otherKindAfterEnd() {
        var machine = StreamDirectionStateMachine()
        _ = machine.received(.streamEnd)
        #expect(machine.received(.hello) == .fail(.unexpected(kind: .hello, expecting: "stream data")))
    }
}
