/// A connection that carries a stream of frames to and from a peer agent, with backpressure both
/// ways (``PeerTransport/connectStream(to:limits:options:)``): continuation streams and `open`
/// transfers.
///
/// Its frames are used inside ``executeThenClose(_:)``, as a NIO `NIOAsyncChannel`'s are; a
/// transport may add its own fast path (TCP joins two NIO channels so that relayed stream bytes
/// never reach the async side).
public protocol PeerStreamConnection: Sendable {
    /// Runs `body` with the connection's frames, then closes the connection.
    func executeThenClose<R: Sendable>(_ body: (_ inbound: PeerFrameInbound, _ outbound: PeerFrameOutbound) async throws -> R) async throws -> R
    /// Closes the connection at once, from anywhere (a deadline's expiry): a pending read ends.
    func close()
}

/// How ``PeerTransport/connectStream(to:limits:options:)`` sets a stream connection up.
public struct PeerStreamOptions: Sendable {
    /// Reading fails once nothing has arrived for this long (`limits.streamIdleTimeout`); nil: never.
    public var idleTimeout: Duration?
    /// The other end of a relayed stream pair (the app's connection), when the connection is to
    /// be relayed to it. Transport specific: TCP takes the app connection's splice, keeps the
    /// new connection on its event loop and holds stream frames for the join.
    public var relayPartner: (any Sendable)?

    /// Options for a stream connection; by default no idle timeout and no relay.
    public init(idleTimeout: Duration? = nil, relayPartner: (any Sendable)? = nil) {
        self.idleTimeout = idleTimeout
        self.relayPartner = relayPartner
    }
}

/// The frames a ``PeerStreamConnection`` receives, in order; the sequence ends when the peer
/// closes the connection. Iterate it from one task.
public struct PeerFrameInbound: AsyncSequence, Sendable {
    public typealias Element = Frame
    private let makeIterator: @Sendable () -> AsyncIterator

    /// The frames of `frames` (a transport's own inbound stream).
    public init<Frames: AsyncSequence & Sendable>(_ frames: Frames) where Frames.Element == Frame {
        makeIterator = { AsyncIterator(frames.makeAsyncIterator()) }
    }

    public func makeAsyncIterator() -> AsyncIterator { makeIterator() }

    /// Reads the next frame from the transport.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: any AsyncIteratorProtocol<Frame, any Error>

        init<Base: AsyncIteratorProtocol>(_ base: Base) where Base.Element == Frame {
            self.base = ThrowingIterator(base: base)
        }

        public mutating func next() async throws -> Frame? { try await base.next() }
    }

    /// Gives any frame iterator the `any Error` failure type the existential needs.
    private struct ThrowingIterator<Base: AsyncIteratorProtocol>: AsyncIteratorProtocol where Base.Element == Frame {
        var base: Base
        mutating func next() async throws -> Frame? { try await base.next() }
    }
}

/// Writes frames to a ``PeerStreamConnection``; a write waits while the peer has not read enough.
public struct PeerFrameOutbound: Sendable {
    private let writeOne: @Sendable (Frame) async throws -> Void
    private let writeMany: @Sendable ([Frame]) async throws -> Void

    /// A writer over a transport's own: `one` writes and flushes a frame, `many` writes frames
    /// with one flush.
    public init(one: @escaping @Sendable (Frame) async throws -> Void, many: @escaping @Sendable ([Frame]) async throws -> Void) {
        writeOne = one
        writeMany = many
    }

    /// Writes and flushes one frame.
    public func write(_ frame: Frame) async throws { try await writeOne(frame) }

    /// Writes frames in order, with one flush.
    public func write(contentsOf frames: [Frame]) async throws { try await writeMany(frames) }
}
