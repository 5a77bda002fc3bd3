import AsyncAlgorithms
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
public struct ContinuationInputStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let chunks: AsyncThrowingChannel<[UInt8], any Error>

    public func makeAsyncIterator() -> AsyncThrowingChannel<[UInt8], any Error>.AsyncIterator {
        chunks.makeAsyncIterator()
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
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let chunk = Array(remaining.prefix(Self.chunkSize))
            remaining = remaining.dropFirst(chunk.count)
            do { try await writer.write(Frame(kind: .streamData, payload: chunk)) } catch {
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
                let chunks = AsyncThrowingChannel<[UInt8], any Error>()
                let (closed, closedSink) = AsyncStream.makeStream(of: Void.self)
                result.resume(returning: .success(ContinuationStreams(
                    input: ContinuationInputStream(chunks: chunks),
                    output: ContinuationOutputStream(writer: outbound, closedSink: closedSink))))
                var ended = false
                do {
                    while let frame = try await frames.next() {
                        if frame.kind == .streamEnd { ended = true; break }
                        if frame.kind == .error, case .error(let code, let message) = try PeerMessage(frame: frame) {
                            // The agent's reason for ending the streams (limits.streamIdleTimeout: 4610).
                            chunks.fail(HandoffError(HandoffError.Code(rawValue: code), message))
                            return
                        }
                        guard frame.kind == .streamData else { throw FrameError.unexpected(kind: frame.kind, expecting: "stream data") }
                        await chunks.send(frame.payload)
                    }
                } catch {
                    chunks.fail(HandoffError.handoffFailed("the continuation stream broke: \(error)"))
                    return
                }
                guard ended else {
                    chunks.fail(HandoffError.handoffFailed("the continuation stream broke: the other app or host went away"))
                    return
                }
                chunks.finish()
                // Keep the connection until this side's output is closed too.
                for await _ in closed { break }
            }
        } catch {
            result.resume(returning: .failure(.connectionUnavailable("cannot open continuation streams: \(error)")))
        }
    }
}
