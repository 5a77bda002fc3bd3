import HandoffCore
import NIOCore

/// How one direction of a relayed stream pair ended at this agent.
public enum StreamDirectionEnd: Sendable, Equatable {
    /// The sender's `streamEnd` was passed on: this direction is complete.
    case ended
    /// A connection of the pair ended, or the sender's connection ended without `streamEnd`: it
    /// went away.
    case closed
}

/// How a splice treats the frames it reads once it relays them.
public struct StreamSpliceDirection: Sendable {
    /// When reading fails, a frame to pass on before the pair is closed (an error the far end
    /// can report), or nil.
    public var lastWords: (@Sendable (any Error) -> Frame?)?
    /// Kinds relayed like stream data besides it: the general "relay these frame kinds too"
    /// (a file send's ``FileTransferMessage/kinds``, an opened file's `opened` and `error`).
    public var alsoRelaying: Set<FrameKind>

    public init(lastWords: (@Sendable (any Error) -> Frame?)? = nil, alsoRelaying: Set<FrameKind> = []) {
        self.lastWords = lastWords
        self.alsoRelaying = alsoRelaying
    }
}

/// One framed channel's end of a relayed pair of continuation streams, usable from any thread.
///
/// Every channel that may carry a relayed stream has a ``StreamSpliceHandler`` between its frame
/// codec and its `NIOAsyncChannel`. Until ``join(_:_:firstFrame:_:_:firstFrame:onEnd:)``, frames
/// pass to the async side as usual, where the sessions do their handshakes. Once joined, stream
/// frames go straight from one channel's decoder to the other channel's encoder on the event
/// loops, with no task in between: a channel is read only while its partner is writable, so a
/// slow reader slows the writer through both agents.
public struct StreamSplice: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<StreamSpliceHandler>

    /// The event loop of the splice's channel.
    public var eventLoop: any EventLoop { channel.eventLoop }

    /// Adds a splice to a channel's pipeline, after its frame codec and before its
    /// ``FrameMessageHandler`` (or last, without one) and its `NIOAsyncChannel`. Call on the
    /// channel's event loop (in its initializer).
    ///
    /// - Parameter holding: hold stream frames that arrive before the splice is joined, instead of
    ///   passing them to the async side (the continuing agent's connection to the source: the
    ///   source's stream data may follow its `streamAccepted` at once). Other frames pass.
    public static func add(to channel: any Channel, holding: Bool = false) throws -> StreamSplice {
        let handler = StreamSpliceHandler(holding: holding)
        let sync = channel.pipeline.syncOperations
        if let messages = try? sync.handler(type: FrameMessageHandler.self) {
            try sync.addHandler(handler, position: .before(messages))
        } else {
            try sync.addHandler(handler)
        }
        return StreamSplice(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
    }

    /// One read per readiness event on channels that may carry a relayed stream (NIO's default
    /// is 4): backpressure is checked between reads, so a relay holds at most one read's worth
    /// for a partner that cannot take it.
    public static let maxMessagesPerRead: UInt = 1

    /// Whether the splice's channel has closed.
    public var isClosed: Bool { !channel.isActive }

    /// Closes the splice's channel.
    public func close() {
        channel.close(promise: nil)
    }

    /// Relays stream frames both ways between two spliced channels until their pair ends.
    ///
    /// Each side's `firstFrame` (`streamAccepted` to the peer, the answer that lets an app start
    /// writing) is written, `first`'s before `second`'s, before anything is relayed to either
    /// side: stream frames that arrive meanwhile are held, and relayed once both are joined.
    ///
    /// - Parameter onEnd: called once per direction (`.ended` once its `streamEnd` is out of the
    ///   process), and with `.closed` or nil (a protocol error, or a read that failed) when a
    ///   connection of the pair goes; the caller closes both connections once the pair is over
    ///   (``StreamDirectionEnd``).
    /// - Throws: when a channel had closed before its first frame could be written; `second`'s
    ///   first frame is not written when `first`'s channel had closed.
    public static func join(_ first: StreamSplice, _ firstDirection: StreamSpliceDirection, firstFrame: Frame?,
                            _ second: StreamSplice, _ secondDirection: StreamSpliceDirection, firstFrame secondFirstFrame: Frame?,
                            onEnd: @escaping @Sendable (StreamDirectionEnd?) -> Void) async throws {
        if first.eventLoop === second.eventLoop {
            // One loop (handoffd runs one): the whole join in one hop, with nothing in between.
            try await first.eventLoop.submit {
                try joinOnLoop(first, firstDirection, firstFrame: firstFrame, second, secondDirection, firstFrame: secondFirstFrame, onEnd: onEnd)
            }.get()
            return
        }
        try await first.submit { try $0.prepare(partner: second, direction: firstDirection, firstFrame: firstFrame, onEnd: onEnd) }
        try await second.submit { try $0.prepare(partner: first, direction: secondDirection, firstFrame: secondFirstFrame, onEnd: onEnd) }
        try await first.submit { $0.start() }
        try await second.submit { $0.start() }
    }

    /// ``join(_:_:firstFrame:_:_:firstFrame:onEnd:)`` for two channels on one event loop, called
    /// on that loop: both first frames are written and the relay has started when it returns.
    public static func joinOnLoop(_ first: StreamSplice, _ firstDirection: StreamSpliceDirection, firstFrame: Frame?,
                                  _ second: StreamSplice, _ secondDirection: StreamSpliceDirection, firstFrame secondFirstFrame: Frame?,
                                  onEnd: @escaping @Sendable (StreamDirectionEnd?) -> Void) throws {
        precondition(first.eventLoop.inEventLoop && second.eventLoop.inEventLoop, "joinOnLoop runs on both channels' event loop")
        try first.handler.value.prepare(partner: second, direction: firstDirection, firstFrame: firstFrame, onEnd: onEnd)
        try second.handler.value.prepare(partner: first, direction: secondDirection, firstFrame: secondFirstFrame, onEnd: onEnd)
        first.handler.value.start()
        second.handler.value.start()
    }

    private func submit(_ body: @escaping @Sendable (StreamSpliceHandler) throws -> Void) async throws {
        let handler = self.handler
        try await eventLoop.submit { try body(handler.value) }.get()
    }

    var isWritable: Bool { channel.isWritable }

    /// Runs `body` with the handler on its event loop: at once when already there, else queued
    /// behind what the loop has to do (so calls from one thread keep their order).
    func onLoop(_ body: @escaping @Sendable (StreamSpliceHandler) -> Void) {
        if eventLoop.inEventLoop {
            body(handler.value)
        } else {
            let handler = self.handler
            eventLoop.execute { body(handler.value) }
        }
    }
}

/// The channel handler behind a ``StreamSplice``: a switch over its mode; the stream logic is
/// ``StreamDirectionStateMachine``.
///
/// It plays two parts. Reading: frames from its channel go to the partner (batched per read
/// cycle, one flush each) as the decoder sliced them, and its channel is read only while the
/// partner's is writable.
/// Writing: frames from the partner are written to its channel, and when its channel becomes
/// writable again the partner is told to read on.
public final class StreamSpliceHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = EncodedFrame
    public typealias InboundOut = EncodedFrame
    public typealias OutboundIn = EncodedFrame
    public typealias OutboundOut = EncodedFrame

    /// How much stream data a holding splice keeps before it stops reading.
    static let holdLimit = 256 * 1024

    private enum Mode {
        /// Frames go to the async side.
        case passing
        /// Stream frames are kept for the partner; others go to the async side.
        case holding
        /// Frames are relayed to the partner.
        case relaying
        /// The direction has failed or its channel has gone: frames are dropped.
        case finished
    }

    private var mode: Mode
    /// Nil once the handler has been removed (NIO removes every handler when its channel closes).
    private var context: ChannelHandlerContext?
    private var eventLoop: (any EventLoop)?
    /// The channel has closed: what it had sent is still here to relay.
    private var channelClosed = false
    private var held: [EncodedFrame] = []
    private var heldBytes = 0
    private var partner: StreamSplice?
    private var direction = StreamDirectionStateMachine()
    private var lastWords: (@Sendable (any Error) -> Frame?)?
    private var onEnd: (@Sendable (StreamDirectionEnd?) -> Void)?
    /// Frames read in this read cycle, for the partner.
    private var outbox: [EncodedFrame] = []
    /// Completes once the `streamEnd` is out (nil until it has been relayed).
    private var endWritten: EventLoopFuture<Void>?
    private var pendingRead = false

    init(holding: Bool) {
        mode = holding ? .holding : .passing
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        eventLoop = context.eventLoop
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        channelClosed = true
        // The two handlers refer to each other through their partners: the first to go breaks
        // the cycle, so a finished pair is freed. A holding splice that has been prepared keeps
        // its partner: `start()` still relays what it held, then lets go.
        if case .holding = mode, partner != nil { return }
        partner = nil
        lastWords = nil
    }

    // MARK: Reading

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch mode {
        case .passing:
            context.fireChannelRead(data)
        case .holding:
            let frame = unwrapInboundIn(data)
            guard frame.kind == .streamData || frame.kind == .streamEnd else {
                context.fireChannelRead(data)
                return
            }
            held.append(frame)
            heldBytes += frame.payloadCount
        case .relaying:
            relay(unwrapInboundIn(data))
        case .finished:
            break
        }
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        sendOutbox()
        context.fireChannelReadComplete()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        channelClosed = true
        if case .relaying = mode { closed() }
        context.fireChannelInactive()
    }

    /// The channel has gone while relaying: nothing can pass to or from it any more. What was read
    /// goes on first, and a `streamEnd` on its way out is let out before the pair is told.
    private func closed() {
        mode = .finished
        sendOutbox()
        guard let onEnd else { return }
        if let endWritten { endWritten.whenComplete { _ in onEnd(.closed) } } else { onEnd(.closed) }
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .relaying = mode, !direction.isEnded {
            mode = .finished
            if let words = lastWords?(error) { outbox.append(EncodedFrame(words, allocator: context.channel.allocator)) }
            let onEnd = self.onEnd
            sendOutbox { _ in onEnd?(nil) }
        }
        context.fireErrorCaught(error)
    }

    private func relay(_ frame: EncodedFrame) {
        guard case .relaying = mode, let eventLoop else { return }
        switch direction.received(frame.kind) {
        case .forward:
            outbox.append(frame)
        case .drop:
            break
        case .end:
            outbox.append(frame)
            let onEnd = self.onEnd
            let written = eventLoop.makePromise(of: Void.self)
            endWritten = written.futureResult
            sendOutbox { ok in
                onEnd?(ok ? .ended : nil)
                written.succeed()
            }
        case .fail(let error):
            mode = .finished
            outbox.removeAll()
            onEnd?(nil)
            context?.fireErrorCaught(error)
        }
    }

    /// Hands the frames read so far to the partner; `written` learns whether the last one got out.
    private func sendOutbox(written: (@Sendable (Bool) -> Void)? = nil) {
        guard !outbox.isEmpty, let partner else {
            written?(partner != nil)
            return
        }
        let frames = outbox
        outbox.removeAll(keepingCapacity: true)
        partner.onLoop { $0.write(frames, written: written) }
    }

    // MARK: Backpressure

    public func read(context: ChannelHandlerContext) {
        switch mode {
        case .holding where heldBytes >= Self.holdLimit:
            pendingRead = true
        case .relaying where partner?.isWritable == false:
            pendingRead = true
        default:
            context.read()
        }
    }

    /// The partner's channel became writable (or this splice was joined): read again if a read
    /// was held back.
    func resumeReading() {
        guard pendingRead, let context else { return }
        pendingRead = false
        read(context: context)
    }

    // MARK: Writing (frames from the partner)

    func write(_ frames: [EncodedFrame], written: (@Sendable (Bool) -> Void)?) {
        guard let context, !channelClosed else {
            written?(false)
            return
        }
        for frame in frames.dropLast() { context.write(wrapOutboundOut(frame), promise: nil) }
        if let last = frames.last {
            if let written {
                let promise = context.eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { result in
                    if case .success = result { written(true) } else { written(false) }
                }
                context.write(wrapOutboundOut(last), promise: promise)
            } else {
                context.write(wrapOutboundOut(last), promise: nil)
            }
        }
        context.flush()
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let partner {
            partner.onLoop { $0.resumeReading() }
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Joining

    /// Learns the partner and writes this side's first frame; stream frames are held from now on.
    func prepare(partner: StreamSplice, direction: StreamSpliceDirection, firstFrame: Frame?,
                 onEnd: @escaping @Sendable (StreamDirectionEnd?) -> Void) throws {
        // A holding splice whose channel has closed since still relays what it kept (the source
        // may have sent everything and closed before the app's side was joined), then ends.
        guard !channelClosed || !held.isEmpty else { throw ChannelError.ioOnClosedChannel }
        self.partner = partner
        self.direction = StreamDirectionStateMachine(alsoRelaying: direction.alsoRelaying)
        self.lastWords = direction.lastWords
        self.onEnd = onEnd
        mode = .holding
        if let firstFrame, let context, !channelClosed {
            context.writeAndFlush(wrapOutboundOut(EncodedFrame(firstFrame, allocator: context.channel.allocator)), promise: nil)
        }
    }

    /// Both sides are prepared: relays what was held, then everything read.
    func start() {
        guard partner != nil else { return }
        mode = .relaying
        let held = self.held
        self.held = []
        heldBytes = 0
        for frame in held { relay(frame) }
        sendOutbox()
        guard !channelClosed else {
            if case .relaying = mode { closed() }
            partner = nil  // removed already: nothing else will break the cycle
            return
        }
        resumeReading()
        // The partner may have held a read back before this side could tell it of writability.
        partner?.onLoop { $0.resumeReading() }
    }
}
