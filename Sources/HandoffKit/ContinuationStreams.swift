import HandoffCore
import HandoffTransport
import NIOCore
import Synchronization

/// A pair of byte streams between the continuing app and the app that published the activity
/// (NSUserActivity's continuation streams), for data that does not fit userInfo.
///
/// Both directions apply backpressure end to end: a write waits while the other app has not read
/// what came before, so neither agent buffers more than a few frames. Closing one end's output
/// ends the other end's input; if the connection breaks, reading throws the error's code.
public struct ContinuationStreams: Sendable {
    /// Bytes from the other app.
    public let input: ContinuationInputStream
    /// Bytes to the other app.
    public let output: ContinuationOutputStream
}

/// Bytes from the other app, as chunks: `for try await chunk in input { ... }`. Ends when the other
/// app closes its output; throws a ``HandoffError`` when the connection breaks.
///
/// Chunks come straight from the connection's buffered frames, in the reading task: iterate the
/// input from one task at a time.
public struct ContinuationInputStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let source: ContinuationInputSource

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: source)
    }

    /// Reads the next chunk from the connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let source: ContinuationInputSource

        public mutating func next() async throws -> [UInt8]? {
            try await source.next()
        }
    }
}

/// The frames of one app's stream connection after the agent's answer, turned into chunks for
/// the app's reading task. Tells the connection's host when the input is over: at its end, when
/// it breaks, or when the app lets go of it unread.
final class ContinuationInputSource: @unchecked Sendable {
    // `frames` and `result` are used by one reading task at a time (`reading` checks it), so they
    // need no lock.
    private var frames: NIOAsyncChannelInboundStream<EncodedFrame>.AsyncIterator
    private var result: Result<Void, HandoffError>?
    private let reading = Atomic(false)
    private let over: AsyncStream<Result<Void, HandoffError>>.Continuation

    init(frames: NIOAsyncChannelInboundStream<EncodedFrame>.AsyncIterator, over: AsyncStream<Result<Void, HandoffError>>.Continuation) {
        self.frames = frames
        self.over = over
    }

    deinit {
        // The app let go of its input unread: the connection need not wait for it.
        if result == nil { over.yield(.success(())) }
        over.finish()
    }

    func next() async throws -> [UInt8]? {
        precondition(!reading.exchange(true, ordering: .acquiring), "read a ContinuationInputStream from one task at a time")
        defer { reading.store(false, ordering: .releasing) }
        if let result { return try result.map { nil }.get() }
        let outcome: Result<[UInt8]?, HandoffError>
        do {
            if let frame = try await frames.next() {
                switch frame.kind {
                case .streamData:
                    // The one copy on this side: from the bytes read into the app's chunk.
                    return frame.payloadBytes
                case .streamEnd:
                    outcome = .success(nil)
                case .error:
                    // The agent's reason for ending the streams (limits.streamIdleTimeout: 4610).
                    if case .error(let code, let message) = try PeerMessage(frame: frame.frame) {
                        outcome = .failure(HandoffError(HandoffError.Code(rawValue: code), message))
                    } else {
                        outcome = .failure(.handoffFailed("the continuation stream broke: a malformed error frame"))
                    }
                default:
                    outcome = .failure(.handoffFailed("the continuation stream broke: \(FrameError.unexpected(kind: frame.kind, expecting: "stream data"))"))
                }
            } else {
                outcome = .failure(.handoffFailed("the continuation stream broke: the other app or host went away"))
            }
        } catch {
            outcome = .failure(.handoffFailed("the continuation stream broke: \(error)"))
        }
        let ended = outcome.map { _ in () }
        result = ended
        over.yield(ended)
        return try outcome.get()
    }
}

/// Bytes to the other app.
///
/// Writes from several tasks are taken one at a time, each whole, in the order they arrive.
public final class ContinuationOutputStream: Sendable {
    /// The largest chunk sent in one frame.
    public static let chunkSize = 60 * 1024
    /// Frames per batch: a batch is written with one hop to the connection's event loop and one
    /// flush.
    static let framesPerBatch = 16

    private let channel: any Channel
    private let closedSink: AsyncStream<Void>.Continuation
    /// Held by one write (or the close) at a time.
    private let turn = AsyncTurn()
    private let state: Mutex<State>

    private struct State {
        var isClosed = false
        /// Two batch buffers, used in turn: one is filled while the other is written. A buffer
        /// is filled again once its last write is done, so its memory is reused rather than
        /// allocated (and zero-filled by the kernel) for every batch.
        var buffers: [ByteBuffer]
        var written: [EventLoopFuture<Void>?] = [nil, nil]
        var next = 0
    }

    init(channel: any Channel, closedSink: AsyncStream<Void>.Continuation) {
        self.channel = channel
        self.closedSink = closedSink
        let capacity = Self.framesPerBatch * (Frame.headerSize + Self.chunkSize)
        state = Mutex(State(buffers: [channel.allocator.buffer(capacity: capacity), channel.allocator.buffer(capacity: capacity)]))
    }

    /// Writes bytes; waits while the other side is behind.
    ///
    /// The bytes are copied once, into frames in a batch buffer of up to 16 frames (960 KiB);
    /// a write returns once its last batch is handed to the connection, and the next batch waits
    /// for the one before the last to be written to the socket.
    public func write(_ bytes: some Collection<UInt8>) async throws(HandoffError) {
        await turn.enter()
        defer { turn.leave() }
        guard !state.withLock({ $0.isClosed }) else { throw .handoffFailed("the continuation stream's output is closed") }
        var remaining = bytes[...]
        while !remaining.isEmpty {
            // The buffer to fill, once its previous batch is out.
            let (slot, previous) = state.withLock { s in (s.next, s.written[s.next]) }
            try await Self.wait(for: previous)
            var buffer = state.withLock { s in
                let buffer = s.buffers[slot]
                s.buffers[slot] = ByteBuffer()  // let go here, so `buffer` is the only reference
                return buffer
            }
            buffer.clear()
            for _ in 0..<Self.framesPerBatch where !remaining.isEmpty {
                let chunk = remaining.prefix(Self.chunkSize)
                buffer.writeFrame(kind: .streamData, payload: chunk)
                remaining = remaining.dropFirst(chunk.count)
            }
            let written = Self.send(EncodedFrame.frames(in: buffer), on: channel)
            state.withLock { s in
                s.buffers[slot] = buffer
                s.written[slot] = written
                s.next = 1 - slot
            }
        }
    }

    /// Writes frames and flushes, on the channel's event loop; the future completes once the
    /// last is written to the socket.
    private static func send(_ frames: [EncodedFrame], on channel: any Channel) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            for frame in frames.dropLast() { channel.write(frame, promise: nil) }
            channel.writeAndFlush(frames.last!, promise: promise)
        }
        return promise.futureResult
    }

    private static func wait(for written: EventLoopFuture<Void>?) async throws(HandoffError) {
        guard let written else { return }
        do { try await written.get() } catch {
            throw .handoffFailed("the continuation stream broke: the other app or host went away (\(error))")
        }
    }

    /// Ends the output: the other app's input finishes after the bytes already written.
    public func close() async {
        await turn.enter()
        defer { turn.leave() }
        guard state.withLock({ s in defer { s.isClosed = true }; return !s.isClosed }) else { return }
        let end = EncodedFrame(Frame(kind: .streamEnd, payload: []), allocator: channel.allocator)
        try? await Self.send([end], on: channel).get()
        closedSink.yield()
        closedSink.finish()
    }
}

/// A first-come, first-served turn for async callers: `enter` waits until the turns before it
/// have left.
final class AsyncTurn: Sendable {
    private struct State {
        var taken = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s in
                if s.taken {
                    s.waiting.append(continuation)
                    return false
                }
                s.taken = true
                return true
            }
            if now { continuation.resume() }
        }
    }

    func leave() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.waiting.isEmpty else {
                s.taken = false
                return nil
            }
            return s.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// Calls its closure for the first value only.
private struct Once<Value: Sendable>: Sendable {
    let body: @Sendable (Value) -> Void
    init(_ body: @escaping @Sendable (Value) -> Void) { self.body = body }
    func resume(returning value: Value) { body(value) }
}

/// Opens one app's end of a stream pair over its own control connection and hosts the NIO channel
/// for as long as the streams live.
struct ContinuationStreamConnection: Sendable {
    let channel: EncodedFrameChannel
    let request: Frame
    let result: CheckedContinuation<Result<ContinuationStreams, HandoffError>?, Never>

    /// Sends the request; on "ok" hands out the streams, then moves bytes until both ends are done.
    func run() async {
        let resumed = Mutex(false)
        let continuation = self.result
        let result = Once { (value: Result<ContinuationStreams, HandoffError>) in
            if resumed.withLock({ old in defer { old = true }; return !old }) { continuation.resume(returning: value) }
        }
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(EncodedFrame(request, allocator: channel.channel.allocator))
                var frames = inbound.makeAsyncIterator()
                guard let first = try await frames.next()?.frame else {
                    result.resume(returning: .failure(.connectionUnavailable("the agent closed the stream connection")))
                    return
                }
                switch try ControlProtocol.decodeResponse(first) {
                case .failure(let error):
                    result.resume(returning: .failure(error))
                    return
                case .success: break
                }
                let (closed, closedSink) = AsyncStream.makeStream(of: Void.self)
                let (inputOver, inputOverSink) = AsyncStream.makeStream(of: Result<Void, HandoffError>.self)
                result.resume(returning: .success(ContinuationStreams(
                    input: ContinuationInputStream(source: ContinuationInputSource(frames: frames, over: inputOverSink)),
                    output: ContinuationOutputStream(channel: channel.channel, closedSink: closedSink))))
                // The app reads its input in its own task. A broken input ends the connection at
                // once; otherwise it stays until this side's output is closed too.
                for await over in inputOver {
                    guard case .success = over else { return }
                    break
                }
                for await _ in closed { break }
            }
        } catch {
            result.resume(returning: .failure(.connectionUnavailable("cannot open continuation streams: \(error)")))
        }
    }
}
