import HandoffCore
import HandoffTransport
import HandoffTrust
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One file's bytes as ``FileSinkHandler`` writes them: to `fd` from byte `start`, hashed on
/// from `digest` (which holds the kept prefix of a resumed file).
struct FileSinkTarget: Sendable {
    var fd: Int32
    var start: Int
    /// The size offered for the whole file; nil for standard input.
    var size: Int?
    /// What standard input may still bring (receive.maxBytes less the files of known size).
    var budget: Int
    var digest: ContentDigest
}

/// How one file's bytes ended at the sink. `written` counts the bytes written this time.
enum FileSinkOutcome: Sendable {
    /// Its `fileEnd` arrived and every byte before it is written: the sender's hash and the
    /// SHA-256 of the whole file.
    case ended(written: Int, claimed: String, computed: String, budget: Int)
    /// The sender sent more than the size it offered.
    case tooLong(written: Int)
    /// Standard input went past receive.maxBytes.
    case overBudget(written: Int)
    /// A write failed (the disk is full, say).
    case writeFailed(written: Int, reason: String)
    /// The connection broke or ended, or the sender sent something else than file data or
    /// `fileEnd` (the reason; nil when the connection just ended).
    case broke(written: Int, reason: String?)
}

/// The receiving agent's file sink, in the peer connection's pipeline (before its splice) for
/// the length of a file send: each file's data frames are checked, batched, written with
/// `pwrite` (``DirectFileWriter``: past the page cache where the file system allows) and hashed
/// (SHA-256) on NIO's blocking thread pool, in order, one batch at a time;
/// the session's task sees only each file's end (``receive(_:)``). Nothing is fsynced here: the
/// file's only `fsync` is the session's, before the file is linked into place.
///
/// The connection is read only while less than ``highWater`` waits to be written: a slow disk
/// slows the sender. Frames that come while no file is armed (the next file's, while the session
/// fsyncs and places the last one) are kept, up to ``highWater`` too, until the next
/// ``receive(_:)``; ``stop()`` passes them and everything after on to the session.
final class FileSinkHandler: ChannelDuplexHandler, @unchecked Sendable {
    // @unchecked: all state is touched on the channel's event loop only.
    typealias InboundIn = EncodedFrame
    typealias InboundOut = EncodedFrame
    typealias OutboundIn = EncodedFrame
    typealias OutboundOut = EncodedFrame

    /// Bytes gathered before a batch is written.
    static let batchBytes = 1 << 20
    /// Bytes waiting to be written above which the connection is not read.
    static let highWater = 4 << 20

    /// The armed file (touched on the event loop only, like the handler).
    private final class Writing: @unchecked Sendable {
        var target: FileSinkTarget
        let promise: EventLoopPromise<FileSinkOutcome>
        /// Bytes written (and hashed) so far.
        var written = 0
        /// Bytes taken: written, being written, or gathered.
        var taken = 0
        var batch: [ByteBuffer] = []
        var batchCount = 0
        /// Bytes being written on the pool.
        var inFlight = 0
        /// Nil while a batch is being written (the pool's thread has it).
        var digest: ContentDigest?
        /// The sender's hash, once its `fileEnd` has come.
        var claimed: String?
        /// Why it stopped, when it did before its `fileEnd`.
        var failure: FileSinkOutcome?
        /// Writes its batches (past the page cache where it can), one at a time.
        let writer = DirectFileWriter()

        /// Its end is known: nothing more of it is taken.
        var isDecided: Bool { claimed != nil || failure != nil }

        init(target: FileSinkTarget, promise: EventLoopPromise<FileSinkOutcome>) {
            self.target = target
            self.promise = promise
            digest = target.digest
        }

        func fail(_ outcome: FileSinkOutcome) {
            guard failure == nil else { return }
            batch = []
            batchCount = 0
            failure = outcome
        }
    }

    private let eventLoop: any EventLoop
    private let pool: NIOThreadPool
    private var context: ChannelHandlerContext?
    private var writing: Writing?
    private var held: [EncodedFrame] = []
    /// The payload bytes in `held`.
    private var heldBytes = 0
    private var pendingRead = false
    private var passing = false
    /// The connection has ended (nil) or failed (the error), when it has.
    private var ended: String??

    init(eventLoop: any EventLoop, pool: NIOThreadPool = .singleton) {
        self.eventLoop = eventLoop
        self.pool = pool
    }

    /// Puts a sink in `splice`'s channel, before the splice.
    static func install(on splice: StreamSplice) async throws -> FileSinkHandler {
        let loop = splice.eventLoop
        return try await splice.addInboundHandler { FileSinkHandler(eventLoop: loop) }
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        connectionEnded(nil)
    }

    // MARK: The session's side

    /// Writes the next file's bytes until its `fileEnd`, or until it cannot go on.
    func receive(_ target: FileSinkTarget) async -> FileSinkOutcome {
        let promise = eventLoop.makePromise(of: FileSinkOutcome.self)
        eventLoop.execute { self.arm(target, promise) }
        do { return try await promise.futureResult.get() } catch { return .broke(written: 0, reason: "\(error)") }
    }

    /// Ends the sink: kept frames, and every frame after them, go on to the session.
    func stop() async {
        try? await eventLoop.submit { self.passOn() }.get()
    }

    private func arm(_ target: FileSinkTarget, _ promise: EventLoopPromise<FileSinkOutcome>) {
        precondition(writing == nil, "one file at a time")
        let file = Writing(target: target, promise: promise)
        writing = file
        var index = 0
        while index < held.count, !file.isDecided {
            take(held[index], into: file)
            index += 1
        }
        held.removeFirst(index)
        heldBytes = held.reduce(0) { $0 + $1.payloadCount }
        if !file.isDecided, let ended { file.fail(.broke(written: file.taken, reason: ended)) }
        writeBatch()
        deliverIfDone()
        resumeReading()
    }

    private func passOn() {
        passing = true
        guard let context else { return }
        let frames = held
        held = []
        heldBytes = 0
        for frame in frames { context.fireChannelRead(wrapInboundOut(frame)) }
        if !frames.isEmpty { context.fireChannelReadComplete() }
        resumeReading()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if passing { return context.fireChannelRead(data) }
        let frame = unwrapInboundIn(data)
        if let file = writing, !file.isDecided, held.isEmpty {
            take(frame, into: file)
        } else {
            held.append(frame)
            heldBytes += frame.payloadCount
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writeBatch()
        deliverIfDone()
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        connectionEnded(nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connectionEnded("\(error)")
        context.fireErrorCaught(error)
    }

    private func connectionEnded(_ reason: String?) {
        guard ended == nil else { return }
        ended = .some(reason)
        if let file = writing, !file.isDecided { file.fail(.broke(written: file.taken, reason: reason)) }
        deliverIfDone()
    }

    /// One frame of the armed file.
    private func take(_ frame: EncodedFrame, into file: Writing) {
        switch frame.kind {
        case .streamData:
            let count = frame.payloadCount
            if let size = file.target.size {
                guard file.target.start + file.taken + count <= size else { return file.fail(.tooLong(written: file.taken)) }
            } else {
                file.target.budget -= count
                guard file.target.budget >= 0 else { return file.fail(.overBudget(written: file.taken)) }
            }
            let parts = frame.payloadParts
            file.batch.append(parts.first)
            if let second = parts.second { file.batch.append(second) }
            file.batchCount += count
            file.taken += count
            if file.batchCount >= Self.batchBytes { writeBatch() }
        case .fileEnd:
            guard case .files(.fileEnd(let sha256))? = try? PeerMessage(frame: frame.frame) else {
                return file.fail(.broke(written: file.taken, reason: "\(FrameError.malformed(kind: .fileEnd, reason: "no hash"))"))
            }
            file.claimed = sha256
        default:
            file.fail(.broke(written: file.taken, reason: "\(FrameError.unexpected(kind: frame.kind, expecting: "file data or fileEnd"))"))
        }
    }

    // MARK: Writing

    /// Hands the gathered bytes to the pool, unless a batch is being written.
    private func writeBatch() {
        guard let file = writing, file.inFlight == 0, file.batchCount > 0, let digest = file.digest else { return }
        let buffers = file.batch
        let fd = file.target.fd
        let offset = file.target.start + file.written
        file.inFlight = file.batchCount
        file.batch = []
        file.batchCount = 0
        file.digest = nil
        let writer = file.writer
        pool.runIfActive(eventLoop: eventLoop) {
            Self.write(buffers, to: fd, at: offset, digest: digest, writer: writer)
        }.whenComplete { result in
            self.batchWritten(result, of: file)
        }
    }

    private func batchWritten(_ result: Result<BatchResult, any Error>, of file: Writing) {
        file.inFlight = 0
        switch result {
        case .success(let done):
            file.digest = done.digest
            file.written += done.written
            if let failure = done.failure { file.fail(.writeFailed(written: file.written, reason: failure)) }
        case .failure(let error):
            file.fail(.writeFailed(written: file.written, reason: "\(error)"))
        }
        writeBatch()
        deliverIfDone()
        resumeReading()
    }

    /// Completes the armed file once its end is known and all of it that is to be written is.
    private func deliverIfDone() {
        guard let file = writing, file.isDecided, file.inFlight == 0 else { return }
        let outcome: FileSinkOutcome
        switch file.failure {
        case .tooLong?: outcome = .tooLong(written: file.written)
        case .overBudget?: outcome = .overBudget(written: file.written)
        case .broke(_, let reason)?: outcome = .broke(written: file.written, reason: reason)
        case let failure?: outcome = failure
        case nil:
            guard file.batchCount == 0, let digest = file.digest else { return }  // its last bytes are still to write
            outcome = .ended(written: file.written, claimed: file.claimed ?? "", computed: digest.hex(), budget: file.target.budget)
        }
        writing = nil
        file.promise.succeed(outcome)
    }

    // MARK: Backpressure

    func read(context: ChannelHandlerContext) {
        if mayRead { context.read() } else { pendingRead = true }
    }

    private var mayRead: Bool {
        if passing { return true }
        // Between two files (the session fsyncs and links the last one) up to the same amount is
        // kept for the next, so the sender does not wait for each file's fsync.
        guard let file = writing, !file.isDecided else { return heldBytes < Self.highWater }
        return file.batchCount + file.inFlight < Self.highWater
    }

    private func resumeReading() {
        guard pendingRead, mayRead, let context else { return }
        pendingRead = false
        context.read()
    }

    // MARK: The pool's part

    private struct BatchResult: Sendable {
        var digest: ContentDigest
        var written: Int
        var failure: String?
    }

    /// Writes `buffers` to `fd` from `offset` (``DirectFileWriter``) and hashes them; stops at
    /// the first failed write.
    private static func write(_ buffers: [ByteBuffer], to fd: Int32, at offset: Int, digest: ContentDigest, writer: DirectFileWriter) -> BatchResult {
        let done = writer.write(buffers, to: fd, at: offset)
        var result = BatchResult(digest: digest, written: done.bytes)
        if let failed = done.errno {
            result.failure = String(cString: strerror(failed))
            return result
        }
        for buffer in buffers { buffer.withUnsafeReadableBytes { result.digest.update($0) } }
        return result
    }
}
