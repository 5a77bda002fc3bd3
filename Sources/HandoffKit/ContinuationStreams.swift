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
    private var frames: NIOAsyncChannelInboundStream<Frame>.AsyncIterator
    private var result: Result<Void, HandoffError>?
    private let reading = Atomic(false)
    private let over: AsyncStream<Result<Void, HandoffError>>.Continuation

    init(frames: NIOAsyncChannelInboundStream<Frame>.AsyncIterator, over: AsyncStream<Result<Void, HandoffError>>.Continuation) {
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
                    return frame.payload
                case .streamEnd:
                    outcome = .success(nil)
                case .error:
                    // The agent's reason for ending the streams (limits.streamIdleTimeout: 4610).
                    if case .error(let code, let message) = try PeerMessage(frame: frame) {
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
public final class ContinuationOutputStream: Sendable {
    /// The largest chunk sent in one frame.
    public static let chunkSize = 60 * 1024
    private let writer: NIOAsyncChannelOutboundWriter<Frame>
    private let closedSink: AsyncStream<Void>.Continuation
    private let isClosed = Mutex(false)

    init(writer: NIOAsyncChannelOutboundWriter<Frame>, closedSink: AsyncStream<Void>.Continuation) {
        self.writer = writer
        self.closedSink = closedSink
    }

    /// Writes bytes; waits while the other side is behind.
    public func write(_ bytes: some Collection<UInt8>) async throws(HandoffError) {
        guard !isClosed.withLock({ $0 }) else { throw .handoffFailed("the continuation stream's output is closed") }
        // Up to 16 frames (960 KiB) handed to the connection at once: one hop to its event loop
        // and one flush for a megabyte, instead of one per frame.
        var remaining = bytes[...]
        var batch: [Frame] = []
        while !remaining.isEmpty {
            batch.removeAll(keepingCapacity: true)
            while !remaining.isEmpty, batch.count < 16 {
                let chunk = Array(remaining.prefix(Self.chunkSize))
                remaining = remaining.dropFirst(chunk.count)
                batch.append(Frame(kind: .streamData, payload: chunk))
            }
            do { try await writer.write(contentsOf: batch) } catch {
                throw .handoffFailed("the continuation stream broke: the other app or host went away (\(error))")
            }
        }
    }

    /// Ends the output: the other app's input finishes after the bytes already written.
    public func close() async {
        guard isClosed.withLock({ old in defer { old = true }; return !old }) else { return }
        try? await writer.write(Frame(kind: .streamEnd, payload: []))
        writer.finish()
        closedSink.yield()
        closedSink.finish()
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
    let channel: FrameChannel
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
                try await outbound.write(request)
                var frames = inbound.makeAsyncIterator()
                guard let first = try await frames.next() else {
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
                    output: ContinuationOutputStream(writer: outbound, closedSink: closedSink))))
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
