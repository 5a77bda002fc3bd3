/// One direction of a pair of continuation streams as a relaying agent passes it on, as a pure
/// state machine: which frames go on, which are dropped, and when the direction is complete.
///
/// Only stream data and the sender's `streamEnd` may travel on a relayed stream; any other frame is
/// a protocol error that ends the pair. The `streamEnd` completes the direction; frames after it
/// are dropped. (The stall fault, `faults.stallStreamAfterBytes`, is not here: it is a handler
/// put in front of the relay only while the fault is set, ``StreamStallBudget``.)
public struct StreamDirectionStateMachine: Sendable {
    /// What to do with a received frame.
    public enum Action: Sendable, Equatable {
        /// Pass the frame on.
        case forward
        /// Pass nothing on.
        case drop
        /// Pass the `streamEnd` on: once it is out, this direction is complete.
        case end
        /// Not a stream frame: end the pair with this error.
        case fail(FrameError)
    }

    private enum State: Sendable {
        case relaying
        case ended
        case failed
    }

    private var state: State = .relaying
    /// Kinds passed on like stream data besides it (a file send's frames).
    private let alsoRelaying: Set<FrameKind>

    /// A direction that has relayed nothing yet; `alsoRelaying` are kinds passed on like stream
    /// data (a file send relays its ``FileTransferMessage/kinds``).
    public init(alsoRelaying: Set<FrameKind> = []) {
        self.alsoRelaying = alsoRelaying
    }

    /// Whether the sender's `streamEnd` has been passed on.
    public var isEnded: Bool {
        if case .ended = state { return true }
        return false
    }

    /// A frame of `kind` arrived from the sender.
    public mutating func received(_ kind: FrameKind) -> Action {
        switch state {
        case .failed:
            return .drop
        case .ended:
            guard kind == .streamData || kind == .streamEnd || alsoRelaying.contains(kind) else { return fail(kind) }
            return .drop
        case .relaying:
            guard kind == .streamData || kind == .streamEnd || alsoRelaying.contains(kind) else { return fail(kind) }
            if kind == .streamEnd {
                state = .ended
                return .end
            }
            return .forward
        }
    }

    private mutating func fail(_ kind: FrameKind) -> Action {
        state = .failed
        return .fail(.unexpected(kind: kind, expecting: "stream data"))
    }
}
