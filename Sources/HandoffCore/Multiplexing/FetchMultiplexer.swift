/// The continuing side of a multiplexed connection, as a pure state machine: many fetches in
/// flight on one connection, each with its request ID, answered as the source finishes them, in
/// any order (docs/PROTOCOL.md, "Multiplexed requests").
///
/// Each fetch runs its own ``ContinuationStateMachine`` (started past the hello, which the
/// connection exchanged once), so every answer and every failure gets the same code and message as
/// on a connection of its own. What the multiplexer adds:
///
/// | event | result |
/// |---|---|
/// | `reply` for a request in flight | its machine reads the inner frame (its header checked against the limits first: a userInfo over `maxUserInfoBytes` fails that request with 4611, not the connection) |
/// | `reply` for an ID not in flight (abandoned after its deadline) | ignored |
/// | any other frame (the source refusing the connection with an `error`) | every request in flight reads it; the connection is done |
/// | the connection ends or breaks | a request that had no answer yet: ``Completion/retry`` (once, on a fresh connection); one cut short: its machine's 4608 |
///
/// A `reply` over `maxFrameBytes` is refused by the decoder before its payload is read, as any
/// frame is: the connection breaks, and its fetches with no answer yet are made again each on a
/// connection of its own, where an oversized userInfo is refused with 4611 as always.
///
/// The shell (``MultiplexedConnection``) owns the I/O and the deadlines; the machine reads no
/// clock.
public struct FetchMultiplexer: Sendable {
    /// How one fetch ended.
    public enum Completion: Sendable, Equatable {
        /// The whole activity arrived.
        case delivered(Activity, source: AppIdentity?)
        /// The source answered with an error, or the answer was refused (code and message as on a
        /// connection of its own).
        case failed(code: HandoffError.Code, message: String)
        /// The connection ended before any of this request's answer arrived: fetch again on a
        /// fresh connection.
        case retry
    }

    private struct Pending: Sendable {
        var machine: ContinuationStateMachine
        /// Whether any frame of the answer has arrived.
        var answered = false
    }

    /// The limits the inner frames are checked against.
    public let limits: FrameLimits
    private var pending: [UInt32: Pending] = [:]
    private var nextID: UInt32 = 1
    /// False once the connection has ended (or must end): no request may start on it.
    public private(set) var isOpen = true

    public init(limits: FrameLimits) { self.limits = limits }

    /// The requests in flight.
    public var inFlight: Int { pending.count }

    /// The IDs of the requests in flight.
    public var inFlightIDs: Set<UInt32> { Set(pending.keys) }

    /// Starts a fetch: its request ID and the `request` frame to send; nil when the connection has
    /// ended (fetch on another).
    public mutating func begin(_ request: FetchRequest, hello: PeerHello, peerName: String) -> (id: UInt32, frame: Frame)? {
        guard isOpen else { return nil }
        var machine = ContinuationStateMachine(request: request, hello: hello, peerName: peerName)
        _ = machine.start()
        guard case .send(let frames) = machine.connected(reused: true), let fetch = frames.first else { return nil }
        var id = nextID
        while pending[id] != nil || id == 0 { id &+= 1 }  // never one in flight, never 0
        nextID = id &+ 1
        pending[id] = Pending(machine: machine)
        return (id, TaggedFrame(id: id, frame: fetch).wrapped(as: .request))
    }

    /// A frame arrived: the requests it finished.
    public mutating func received(_ frame: Frame) -> [(id: UInt32, completion: Completion)] {
        guard frame.kind == .reply else {
            // Not part of any one answer: the source refuses the connection (an error before it
            // closes), or it broke the protocol. Every request in flight reads it, as it would on
            // a connection of its own.
            isOpen = false
            return finishAll { machine, _ in machine.received(frame) }
        }
        let tagged: TaggedFrame
        do { tagged = try TaggedFrame(unwrapping: frame) } catch { return ended(error) }
        guard var entry = pending[tagged.id] else { return [] }
        let action: ContinuationStateMachine.Action
        do throws(FrameError) {
            try limits.check(tagged.innerHeader)
            action = entry.machine.received(tagged.frame)
        } catch {
            action = entry.machine.receiveFailed(error)
        }
        entry.answered = true
        if case .read = action {
            pending[tagged.id] = entry
            return []
        }
        pending.removeValue(forKey: tagged.id)
        return [(tagged.id, Self.completion(action, source: entry.machine.source))]
    }

    /// The request's caller gave up (its deadline passed, or it was cancelled): its answer, if
    /// one comes, is ignored.
    public mutating func abandon(_ id: UInt32) {
        pending.removeValue(forKey: id)
    }

    /// The connection closed (`error` nil) or broke: every request in flight ends.
    public mutating func ended(_ error: (any Error)?) -> [(id: UInt32, completion: Completion)] {
        isOpen = false
        return finishAll { machine, answered in
            guard answered else { return nil }
            return error.map { machine.receiveFailed($0) } ?? machine.closed()
        }
    }

    /// Ends every request in flight with what `body` makes of it (nil: retry).
    private mutating func finishAll(
        _ body: (inout ContinuationStateMachine, _ answered: Bool) -> ContinuationStateMachine.Action?
    ) -> [(id: UInt32, completion: Completion)] {
        var done: [(id: UInt32, completion: Completion)] = []
        for id in pending.keys.sorted() {
            guard var entry = pending[id] else { continue }
            if let action = body(&entry.machine, entry.answered) {
                done.append((id, Self.completion(action, source: entry.machine.source)))
            } else {
                done.append((id, .retry))
            }
        }
        pending.removeAll()
        return done
    }

    private static func completion(_ action: ContinuationStateMachine.Action, source: AppIdentity?) -> Completion {
        switch action {
        case .deliver(let activity): .delivered(activity, source: source)
        case .fail(let code, let message): .failed(code: code, message: message)
        default: .failed(code: .userActivityHandoffFailed, message: "internal error: the continuation ended in an unexpected state")
        }
    }
}
