/// The stall fault (`faults.stallStreamAfterBytes`) on one direction of a relayed stream pair,
/// as a pure state machine: stream data passes until the budget is used up, the frame that
/// crosses it is cut, and every stream frame after that, the sender's `streamEnd` included, is
/// dropped. The direction then never ends: the receiver waits until the sender's connection goes.
///
/// It only holds stream frames back (and a file send's frames, which travel as stream frames do:
/// a stalled send never reaches its `fileEnd`); any other frame passes, for the relay's
/// ``StreamDirectionStateMachine`` to judge.
public struct StreamStallBudget: Sendable {
    /// What to do with a received frame.
    public enum Action: Sendable, Equatable {
        /// Pass the frame on.
        case pass
        /// Pass on only the first `count` bytes of the frame's payload (the budget ran out inside it).
        case passPrefix(Int)
        /// Pass nothing on.
        case drop
    }

    /// Bytes of stream data still to pass.
    private var remaining: Int

    /// - Parameter bytes: how many bytes of stream data pass (a negative budget is 0).
    public init(bytes: Int) {
        remaining = max(0, bytes)
    }

    /// A frame of `kind` with `payloadBytes` bytes of payload arrived from the sender.
    public mutating func received(_ kind: FrameKind, payloadBytes: Int) -> Action {
        guard kind == .streamData || kind == .streamEnd || FileTransferMessage.kinds.contains(kind) else { return .pass }
        guard remaining > 0 else { return .drop }
        guard kind == .streamData else { return .pass }
        if payloadBytes > remaining {
            defer { remaining = 0 }
            return .passPrefix(remaining)
        }
        remaining -= payloadBytes
        return .pass
    }
}
