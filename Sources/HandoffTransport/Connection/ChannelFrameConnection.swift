import HandoffCore
import NIOCore
import Synchronization

/// A ``FrameConnection`` over a NIO channel whose pipeline has the frame codec. Used by the
/// continuing side and by the CLI; one reader at a time calls ``receive()``.
public final class ChannelFrameConnection: UnpinnedFrameConnection {
    let channel: any Channel
    let inbox: FrameInbox
    /// The peer's device ID once TLS is up; nil on connections without TLS.
    public let peerIdentity: PeerIdentityBox?
    /// Completes when the TLS handshake has; nil without TLS.
    let handshake: EventLoopFuture<Void>?

    init(channel: any Channel, inbox: FrameInbox, peerIdentity: PeerIdentityBox? = nil, handshake: EventLoopFuture<Void>? = nil) {
        self.channel = channel
        self.inbox = inbox
        self.peerIdentity = peerIdentity
        self.handshake = handshake
    }

    /// Adds the codec and the inbox to a fresh channel and wraps it.
    static func configure(_ channel: any Channel, limits: FrameLimits, peerIdentity: PeerIdentityBox? = nil,
                          handshake: EventLoopFuture<Void>? = nil) throws -> ChannelFrameConnection {
        let inbox = FrameInbox()
        try channel.pipeline.syncOperations.addFrameCodec(limits: limits)
        try channel.pipeline.syncOperations.addHandler(FrameInboxHandler(inbox: inbox))
        return ChannelFrameConnection(channel: channel, inbox: inbox, peerIdentity: peerIdentity, handshake: handshake)
    }

    /// The identity the peer proved in the TLS handshake; nil on connections without TLS.
    public var provenIdentity: ProvenPeerIdentity? {
        peerIdentity.flatMap { box in
            box.identity.map { ProvenPeerIdentity(deviceID: $0.id.bytes, certificateDER: $0.certificateDER) }
        }
    }

    public func send(_ frames: [Frame]) async throws {
        for frame in frames.dropLast() { channel.write(frame, promise: nil) }
        if let last = frames.last { try await channel.writeAndFlush(last) }
    }

    public func receive() async throws -> Frame? { try await inbox.next() }

    public func close() async {
        try? await channel.close()
    }

    /// Fault injection (`faults.dropAfterBytes`): lets `budget` more bytes of frames out, then closes.
    public func limitOutbound(toBytes budget: Int) async {
        await channel.limitOutbound(toBytes: budget)
    }
}

extension ChannelFrameConnection: OutboundLimiting {}

/// Frames received on a channel, waiting for a reader. Holds at most what the peer sent before
/// the reader asked: every request/response exchange on these connections is bounded. One
/// reader at a time calls ``next()``.
public final class FrameInbox: Sendable {
    private struct State {
        var frames: [Frame] = []
        var end: Result<Void, any Error>?
        var waiter: CheckedContinuation<Frame?, any Error>?
    }

    private let state = Mutex(State())

    public init() {}

    /// Hands `frame` to the reader (dropped once the inbox has ended).
    public func push(_ frame: Frame) {
        let waiter = state.withLock { s -> CheckedContinuation<Frame?, any Error>? in
            guard s.end == nil else { return nil }
            if let w = s.waiter { s.waiter = nil; return w }
            s.frames.append(frame)
            return nil
        }
        waiter?.resume(returning: frame)
    }

    /// Ends the inbox: the reader gets the frames still held, then nil (or `error`).
    public func finish(_ error: (any Error)? = nil) {
        let waiter = state.withLock { s -> CheckedContinuation<Frame?, any Error>? in
            if s.end == nil { s.end = error.map { .failure($0) } ?? .success(()) }
            defer { s.waiter = nil }
            return s.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// The next frame; nil once the inbox has ended and is empty.
    public func next() async throws -> Frame? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Frame?, any Error>) in
                let immediate: Result<Frame?, any Error>? = state.withLock { s in
                    if !s.frames.isEmpty { return .success(s.frames.removeFirst()) }
                    switch s.end {
                    case .success?: return .success(nil)
                    case .failure(let e)?: return .failure(e)
                    case nil:
                        if Task.isCancelled { return .failure(CancellationError()) }
                        s.waiter = continuation
                        return nil
                    }
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { s in defer { s.waiter = nil }; return s.waiter }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// Feeds decoded frames into a ``FrameInbox``; a decoding error ends the inbox and closes the
/// channel (only this connection).
final class FrameInboxHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = Frame

    let inbox: FrameInbox

    init(inbox: FrameInbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inbox.push(unwrapInboundIn(data))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbox.finish(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.finish()
        context.fireChannelInactive()
    }
}
