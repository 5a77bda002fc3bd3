import HandoffCore
import HandoffTransport
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A handler command whose standard input and output are the continuation streams to the source
/// app (config `"streams": true`): bytes from the source app arrive on stdin (EOF when it closes
/// its output), what the command writes to stdout goes to the source app. Both directions go
/// through NIO channels, so a command that reads slowly slows the sender.
enum StreamingCommand {
    /// Opens the streams to the source agent, then runs `argv` on them. Exit 0 means handled.
    static func run(_ argv: [String], environment: [String: String], timeout: Duration,
                    source: PeerRecord, activityID: UUID, agent: Agent) async -> Result<CommandOutcome, HandoffError> {
        let limits = agent.configuration.limits
        let connection: any PeerStreamConnection
        do {
            connection = try await agent.transport.connectStream(to: source.endpoint, limits: ContinuationStreamSession.peerLimits,
                                                                 options: PeerStreamOptions())
        } catch {
            return .failure(.connectionUnavailable("cannot connect to \(source.name) for continuation streams: \(error)"))
        }
        let request = StreamRequest(activityID: activityID, streamID: UUID.random())
        do {
            return try await connection.executeThenClose { peerInbound, peerOutbound in
                try await peerOutbound.write(PeerMessage.hello(agent.hello).frame)
                try await peerOutbound.write(PeerMessage.streamOpen(request).frame)
                let (answers, answerSink) = AsyncStream.makeStream(of: Result<Void, HandoffError>.self)
                let (stdins, stdinSink) = AsyncStream.makeStream(of: NIOAsyncChannelOutboundWriter<ByteBuffer>.self)
                let (stdinDone, stdinDoneSink) = AsyncStream.makeStream(of: Void.self)
                return try await withThrowingTaskGroup(of: Void.self) { group in
                    // Source app to the command's stdin.
                    group.addTask {
                        var frames = peerInbound.makeAsyncIterator()
                        let answer = await ContinuationStreamSession.handshake(&frames, peer: source.name, timeout: limits.fetchTimeout)
                        answerSink.yield(answer)
                        answerSink.finish()
                        guard case .success = answer else { return }
                        defer { stdinDoneSink.finish() }
                        for await stdin in stdins {
                            defer { stdin.finish() }
                            while let frame = try await frames.next() {
                                if frame.kind == .streamEnd { return }
                                guard frame.kind == .streamData else { return }
                                try await stdin.write(ByteBuffer(bytes: frame.payload))
                            }
                            return
                        }
                    }
                    // The source must accept within fetchTimeout; closing the connection ends the wait.
                    var answerIterator = answers.makeAsyncIterator()
                    let answer = await Deadline.watch(limits.fetchTimeout, on: agent.clock, onExpiry: { connection.close() }) {
                        await answerIterator.next(isolation: #isolation)
                    }.value ?? .failure(.handoffFailed("the stream request to \(source.name) ended"))
                    if case .failure(let error) = answer {
                        stdinSink.finish()
                        return .failure(error)
                    }
                    let outcome = try await runCommand(argv, environment: environment, timeout: timeout, clock: agent.clock, stdinSink: stdinSink,
                                                       stdinDone: stdinDone, peerOutbound: peerOutbound)
                    group.cancelAll()
                    return .success(outcome)
                }
            }
        } catch {
            return .failure(.handoffFailed("the continuation streams to \(source.name) broke: \(error)"))
        }
    }

    /// Starts the command (``ChildProcess``) on two pipes wrapped in a NIO channel; copies its
    /// stdout to the peer and hands its stdin writer to the other direction; waits for it to exit.
    /// After `timeout` it is stopped by the children's one teardown policy and the outcome is
    /// `.timedOut`.
    private static func runCommand(_ argv: [String], environment: [String: String], timeout: Duration, clock: any Clock<Duration>,
                                   stdinSink: AsyncStream<NIOAsyncChannelOutboundWriter<ByteBuffer>>.Continuation,
                                   stdinDone: AsyncStream<Void>,
                                   peerOutbound: PeerFrameOutbound) async throws -> CommandOutcome {
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { return .failedToStart("pipe: \(String(cString: strerror(errno)))") }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let (childStdin, childStdout) = (toChild[0], fromChild[1])
        // The agent's ends belong to the NIO channel; the child's are closed once it has started
        // (or could not be). Half-closure: the command closing its stdout must not close its stdin.
        let pipes: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            pipes = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .takingOwnershipOfDescriptors(input: fromChild[0], output: toChild[1]) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                    }
                }
        } catch {
            close(childStdin)
            close(childStdout)
            throw error
        }
        return try await pipes.executeThenClose { stdout, stdin in
            try await ChildProcess.run(argv, environment: environment, stdin: .descriptor(childStdin, closeAfterSpawn: true),
                                       stdout: .descriptor(childStdout, closeAfterSpawn: true), stderr: .descriptor(STDERR_FILENO),
                                       timeout: timeout, clock: clock) { _ in
                stdinSink.yield(stdin)
                stdinSink.finish()
                for try await buffer in stdout {
                    try await peerOutbound.write(PeerMessage.streamData(Array(buffer.readableBytesView)).frame)
                }
                try await peerOutbound.write(PeerMessage.streamEnd.frame)
                // Keep the command's stdin open until the source app has finished sending.
                for await _ in stdinDone {}
            }
        }
    }
}
