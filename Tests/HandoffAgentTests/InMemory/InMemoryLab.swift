import Foundation
import HandoffCore
import HandoffDiscovery
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Logging
import NIOCore
import NIOEmbedded
import Synchronization

@testable import HandoffAgent
@testable import HandoffTransport

/// Whole agents in one process: each `Agent` with its peer listener and its control socket on an
/// ``InMemoryNetwork``, its sessions (`PeerSession`, `ControlSession`) served as the daemon
/// serves them, HandoffKit apps connected to it in memory, and a ``ManualClock`` for its
/// sessions' deadlines. No sockets and no sleeps; what DNS-SD would deliver, the test delivers
/// (``InMemoryHost/discover(_:)``).
enum InMemoryLab {
    /// Runs `hosts` (their listeners and control connections) while `body` runs, then stops them.
    static func run<R: Sendable>(_ hosts: [InMemoryHost], _ body: @Sendable () async throws -> R) async throws -> R {
        try await withThrowingTaskGroup(of: R?.self) { group in
            for host in hosts { group.addTask { await host.serve(); return nil } }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Serves one accepted in-memory connection as the daemon's ``FrameServer`` serves a socket's:
    /// `handler` gets a ``FrameServer/Connection`` whose frames cross `end`, and is cancelled
    /// when the connection closes.
    static func serve(_ end: InMemoryPeerConnection, peerUID: UInt32?, remoteHost: String? = nil,
                      handler: @escaping @Sendable (FrameServer.Connection) async throws -> Void) async {
        let (inbound, source) = NIOAsyncChannelInboundStream<Frame>.makeTestingStream()
        let (outbound, sink) = NIOAsyncChannelOutboundWriter<Frame>.makeTestingWriter()
        let identity = identityBox(end.provenIdentity)
        // Continuation streams go over pipe channels (``PipeChannels``): this splice never joins.
        let splice = try! StreamSplice.add(to: EmbeddedChannel())
        // A byte budget (faults.dropAfterBytes) counts from the frames written after it is set, as
        // on a socket: it travels in order with the frames, as a marker the pump below applies.
        let marker = Frame(kind: .controlResponse, payload: Array("in-memory byte budget \(UUID())".utf8))
        let budgets = ByteBudgets()
        let connection = FrameServer.Connection(
            inbound: inbound, outbound: outbound, remoteAddress: remoteHost.flatMap { try? SocketAddress(ipAddress: $0, port: 1) }, peerIdentity: identity, gate: nil, peerUID: peerUID,
            close: { end.closeNow() }, splice: splice,
            faultSite: InMemoryFaultSite(budgets: budgets, outbound: outbound, marker: marker))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await frame in sink {
                    if frame == marker {
                        end.limitOutbound(toBytes: budgets.queue.withLock { $0.removeFirst() })
                        continue
                    }
                    do { try await end.send([frame]) } catch { break }
                }
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { session in
                    session.addTask { try? await handler(connection) }
                    session.addTask {
                        // Frames to the session, until the other end closes: then, as on a socket,
                        // the session is cancelled.
                        do {
                            while let frame = try await end.receive() { source.yield(frame) }
                            source.finish()
                        } catch {
                            source.finish(throwing: error)
                        }
                    }
                    await session.next()
                    session.cancelAll()
                }
                outbound.finish()
                end.closeNow()
            }
        }
    }
}

extension InMemoryLab {
    /// What a served connection knows of the identity the other end proved, as TLS records it.
    static func identityBox(_ proven: ProvenPeerIdentity?) -> PeerIdentityBox? {
        guard let proven, let device = proven.device else { return nil }
        let box = PeerIdentityBox()
        box.set(device, certificateDER: proven.certificateDER)
        return box
    }
}

/// Byte budgets set on a connection, in order, until the frames written before each have gone.
final class ByteBudgets: Sendable {
    let queue = Mutex<[Int]>([])
}

/// A device identity per name, made once for all the in-memory tests.
enum InMemoryDevices {
    private static let made = Mutex<[String: DeviceIdentity]>([:])

    static func identity(_ name: String) -> DeviceIdentity {
        made.withLock { all in
            if let known = all[name] { return known }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-inmemory-\(name)-\(UUID().uuidString.prefix(8))").path
            let identity = try! DeviceIdentity.loadOrCreate(directory: directory, commonName: name)
            all[name] = identity
            return identity
        }
    }
}

extension DeviceIdentity {
    /// What this device proves when it connects (its certificate).
    var proven: ProvenPeerIdentity { ProvenPeerIdentity(deviceID: deviceID.bytes, certificateDER: certificateDER) }
}

/// Where the in-memory lab's frame connections take fault decorators: a byte budget travels in
/// order with the frames, as a marker the lab's pump applies to the connection. These connections
/// never carry continuation streams (stream connections are pipe channels, whose pipelines take
/// the stall as on a socket), so there is nothing to stall here.
private struct InMemoryFaultSite: ConnectionFaultSite {
    let budgets: ByteBudgets
    let outbound: NIOAsyncChannelOutboundWriter<Frame>
    let marker: Frame

    func limitOutbound(toBytes budget: Int) async {
        budgets.queue.withLock { $0.append(budget) }
        try? await outbound.write(marker)
    }

    func stallStreams(afterBytes budget: Int) async throws {
        throw StreamsNotRelayed()
    }

    struct StreamsNotRelayed: Error {}
}
