/// One direction of a pair of continuation streams as a relaying agent passes it on, as a pure
/// state machine: which frames go on, which are dropped, and when the direction is complete.
///
/// Only stream data and the sender's `streamEnd` may travel on a relayed stream; any other frame is
/// a protocol error that ends the pair. The `streamEnd` completes the direction; frames after it
/// are dropped. With the stall fault (`faults.stallStreamAfterBytes`) only that many bytes of
/// stream data are passed on: the rest, `streamEnd` included, is dropped, so the receiver waits
/// until the sender's connection goes.
public struct StreamDirectionStateMachine: Sendable {
    /// What to do with a received frame.
    public enum Action: Sendable, Equatable {
        /// Pass the frame on.
        case forward
        /// Pass on only the first `count` bytes of the frame's payload (the stall fault's budget
        /// ran out inside it).
        case forwardPrefix(Int)
        /// Pass nothing on.
        case drop
        /// Pass the `streamEnd` on: once it is out, this direction is complete.
        case end
        /// Not a stream frame: end the pair with this error.
        case fail(FrameError)
    }

    private enum State: Sendable {
        case relaying(budget: Int?)
        case ended
        case failed
    }

    private var state: State

    /// - Parameter stallAfterBytes: fault injection: pass on at most this many bytes of stream
    ///   data (nil: no limit).
    public init(stallAfterBytes: Int? = nil) {
        state = .relaying(budget: stallAfterBytes.map { max(0, $0) })
    }

    /// Whether the sender's `streamEnd` has been passed on.
    public var isEnded: Bool {
        if case .ended = state { return true }
        return false
    }

    /// A frame of `kind` with `payloadBytes` bytes of payload arrived from the sender.
    public mutating func received(_ kind: FrameKind, payloadBytes: Int) -> Action {
        switch state {
        case .failed:
            return .drop
        case .ended:
            guard kind == .streamData || kind == .streamEnd else { return fail(kind) }
            return .drop
        case .relaying(let budget):
            guard kind == .streamData || kind == .streamEnd else { return fail(kind) }
            if let budget {
                guard budget > 0 else { return .drop }
                if kind == .streamData {
                    if payloadBytes > budget {
                        state = .relaying(budget: 0)
                        return .forwardPrefix(budget)
                    }
                    state = .relaying(budget: budget - payloadBytes)
                    return .forward
                }
            }
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
