import HandoffCore
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connections within one process whose two ends are NIO channels joined by two kernel pipes:
/// each end is set up as its TCP or control-socket counterpart is (frame codec, idle timer,
/// ``StreamSplice``, async channel), so the relay of continuation streams, its backpressure and
/// the fault handlers run exactly as between hosts, without a socket. The in-memory lab of the
/// tests uses them for stream connections, between agents and between an app and its agent.
///
/// Closing either end closes both pipes it holds: the other end reads the end and closes too
/// (as a TCP peer would), and what it writes meanwhile fails.
public enum PipeChannels {
    /// The accepting end of such a connection, set up as ``FrameServer`` sets up a connection it
    /// accepts, until ``serve(peerIdentity:peerUID:handler:)`` serves it.
    public struct Served: Sendable {
        let channel: NIOAsyncChannel<Frame, Frame>
        let splice: StreamSplice

        /// Serves the connection as ``FrameServer/run(logger:handler:)`` serves one it accepted:
        /// `handler` gets its ``FrameServer/Connection`` (with `peerIdentity`, the identity the
        /// other end proved, and `peerUID`, the uid of a local client) and is cancelled when the
        /// connection closes; the connection is closed when `handler` returns.
        public func serve(peerIdentity: PeerIdentityBox?, peerUID: UInt32?,
                          handler: @escaping @Sendable (FrameServer.Connection) async throws -> Void) async throws {
            let accepted = FrameServer.Accepted(channel: channel, identity: peerIdentity, gate: nil, peerUID: peerUID, splice: splice)
            try await FrameServer.serve(channel, accepted, splice: splice, handler: handler)
        }

        /// Closes the connection (both ends see it close).
        public func close() {
            channel.channel.close(promise: nil)
        }
    }

    /// A peer stream connection, as ``TCPPeerConnector/connectStream(to:limits:options:)`` opens
    /// one (without TLS: the caller proves identities), and the listening agent's end.
    ///
    /// - Parameters:
    ///   - limits: the connecting agent's frame limits.
    ///   - listenerLimits: the listening agent's.
    ///   - options: as for TCP: with a ``StreamSplice`` as `relayPartner`, the connection runs on
    ///     its event loop with a holding splice of its own; an `idleTimeout` fails a quiet stream.
    public static func peerStream(limits: FrameLimits, listenerLimits: FrameLimits, options: PeerStreamOptions,
                                  group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> (connection: ChannelStreamConnection, listening: Served)
    {
        let partner = options.relayPartner as? StreamSplice
        let (client, served) = try await pair(group: partner?.eventLoop ?? group) { channel in
            try StreamChannels.configure(channel, limits: limits, idleTimeout: options.idleTimeout, holdingSplice: partner != nil)
        } second: { channel in
            try channel.pipeline.syncOperations.addFrameCodec(limits: listenerLimits)
            let (connection, splice) = try FrameServer.wrapAccepted(channel)
            return Served(channel: connection, splice: splice)
        }
        return (ChannelStreamConnection(channel: client.channel, splice: client.splice), served)
    }

    /// An app's stream connection to its agent, as ``StreamChannels/connect(controlSocket:group:)``
    /// opens one on the control socket, and the agent's end, as its control listener accepts it.
    public static func appStream(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> (app: EncodedFrameChannel, agent: Served)
    {
        try await pair(group: group) { channel in
            try StreamChannels.configureAppEnd(channel)
        } second: { channel in
            try channel.pipeline.syncOperations.addFrameCodec(limits: ControlProtocol.limits)
            let (connection, splice) = try FrameServer.wrapAccepted(channel)
            return Served(channel: connection, splice: splice)
        }
    }

    /// Two channels on `group`, each reading the pipe the other writes, set up by `first` and
    /// `second` on their event loops. Reads adapt up to 256 KiB, one per readiness event, as on
    /// the agent's sockets.
    private static func pair<A: Sendable, B: Sendable>(
        group: any EventLoopGroup,
        _ first: @escaping @Sendable (any Channel) throws -> A,
        second: @escaping @Sendable (any Channel) throws -> B
    ) async throws -> (A, B) {
        let toFirst = try Pipe()
        let toSecond: Pipe
        do { toSecond = try Pipe() } catch {
            toFirst.close()
            throw error
        }
        let a: A
        do {
            a = try await bootstrap(group).takingOwnershipOfDescriptors(input: toFirst.read, output: toSecond.write) { channel in
                channel.eventLoop.makeCompletedFuture { try first(channel) }
            }
        } catch {
            toFirst.close()
            toSecond.close()
            throw error
        }
        do {
            let b = try await bootstrap(group).takingOwnershipOfDescriptors(input: toSecond.read, output: toFirst.write) { channel in
                channel.eventLoop.makeCompletedFuture { try second(channel) }
            }
            return (a, b)
        } catch {
            // The first channel reads the end of its input and closes.
            Pipe.close(toSecond.read)
            Pipe.close(toFirst.write)
            throw error
        }
    }

    private static func bootstrap(_ group: any EventLoopGroup) -> NIOPipeBootstrap {
        NIOPipeBootstrap(group: group)
            .channelOption(.recvAllocator, value: FrameReads.recvAllocator)
            .channelOption(.maxMessagesPerRead, value: StreamSplice.maxMessagesPerRead)
    }

    /// A kernel pipe's two descriptors.
    private struct Pipe {
        let read: CInt
        let write: CInt

        init() throws {
            var fds: [CInt] = [0, 0]
            guard pipe(&fds) == 0 else { throw IOError(errnoCode: errno, reason: "pipe") }
            (read, write) = (fds[0], fds[1])
        }

        func close() {
            Self.close(read)
            Self.close(write)
        }

        static func close(_ descriptor: CInt) {
            #if canImport(Glibc)
            _ = Glibc.close(descriptor)
            #else
            _ = Darwin.close(descriptor)
            #endif
        }
    }
}
