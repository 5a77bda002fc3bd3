import Foundation
import HandoffConfiguration
import HandoffCore
import HandoffDiscovery
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Logging

@testable import HandoffAgent
@testable import HandoffTransport

/// One whole agent on an ``InMemoryNetwork``: the `Agent` (with an ``InMemoryPeerTransport``
/// for every peer connection and a ``ManualClock`` for its sessions' deadlines), its peer
/// listener, and its control socket for HandoffKit apps, all in memory. ``InMemoryLab/run(_:_:)``
/// serves them.
final class InMemoryHost: Sendable {
    let name: String
    let identity: DeviceIdentity
    let agent: Agent
    let transport: InMemoryPeerTransport
    let listener: InMemoryNetwork.Listener
    let clock: ManualClock
    /// The in-memory device `name` as a paired device: with `advertisingKey`, its advertisements
    /// are read at once; without, its key is learnt by a key exchange first.
    static func device(_ name: String, advertisingKey: AdvertisingKey?) -> PairedDevice {
        let identity = InMemoryDevices.identity(name)
        return PairedDevice(deviceID: identity.deviceID, name: name, advertisingKey: advertisingKey, publicKey: identity.publicKey)
    }

    /// alpha (10.0.0.1) and bravo (10.0.0.2) on `network`, paired with each other, each knowing
    /// the other's advertising key; `configureAlpha` changes alpha's configuration.
    static func pairedAlphaAndBravo(on network: InMemoryNetwork, configureAlpha: (inout AgentConfiguration) -> Void = { _ in })
        -> (alpha: InMemoryHost, bravo: InMemoryHost)
    {
        let keys = (alpha: AdvertisingKey.random(), bravo: AdvertisingKey.random())
        let alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network, paired: [device("bravo", advertisingKey: keys.bravo)],
                                 advertisingKey: keys.alpha, configure: configureAlpha)
        let bravo = InMemoryHost("bravo", host: "10.0.0.2", network: network, paired: [device("alpha", advertisingKey: keys.alpha)],
                                 advertisingKey: keys.bravo)
        return (alpha, bravo)
    }

    /// The advertising key the agent started with (paired hosts made after it know it).
    let advertisingKey: AdvertisingKey
    /// Apps' connections to the control socket, for ``serve()``.
    private let controlConnections: (stream: AsyncStream<InMemoryPeerConnection>, continuation: AsyncStream<InMemoryPeerConnection>.Continuation)
    /// Apps' stream connections to the control socket (pipe channels), for ``serve()``.
    private let streamConnections: (stream: AsyncStream<PipeChannels.Served>, continuation: AsyncStream<PipeChannels.Served>.Continuation)

    /// The service type every in-memory agent advertises.
    static let serviceType = "_handoffmem._tcp"

    /// An agent named `name` listening at `host`, paired with the `paired` devices (see
    /// ``device(_:advertisingKey:)``).
    init(_ name: String, host: String, network: InMemoryNetwork, paired: [PairedDevice] = [], advertisingKey: AdvertisingKey = .random(),
         offersMultiplexing: Bool = true, configure: (inout AgentConfiguration) -> Void = { _ in }) {
        self.name = name
        self.advertisingKey = advertisingKey
        identity = InMemoryDevices.identity(name)
        clock = ManualClock()
        var configuration = AgentConfiguration(name: name, socketPath: "/nonexistent/handoff-inmemory-\(name).sock")
        configuration.serviceType = Self.serviceType
        configure(&configuration)
        let security = try! AgentSecurity(identity: identity, trust: TrustStore(ownAdvertisingKey: advertisingKey, devices: paired),
                                          stateDirectory: nil)
        var transport = network.transport(identity: identity.proven, host: host)
        transport.offersMultiplexing = offersMultiplexing
        self.transport = transport
        listener = network.listen(host: host, port: 7000, identity: identity.proven, limits: FrameLimits(maxFrameBytes: 64 * 1024, maxUserInfoBytes: 0))
        agent = Agent(configuration: configuration, port: 7000, transport: transport, logger: quietLogger, security: security, clock: clock,
                      savedActivities: SavedActivities(path: nil))
        controlConnections = AsyncStream.makeStream(of: InMemoryPeerConnection.self)
        streamConnections = AsyncStream.makeStream(of: PipeChannels.Served.self)
    }

    /// Runs the agent's background work and serves peer connections and apps' control
    /// connections, until cancelled: what handoffd's service group runs, but discovery.
    func serve() async {
        let agent = agent
        await withDiscardingTaskGroup { group in
            group.addTask { try? await agent.background.run() }
            group.addTask {
                await withDiscardingTaskGroup { sessions in
                    for await accepted in self.listener.connections {
                        sessions.addTask {
                            await InMemoryLab.serve(accepted.connection, peerUID: nil, remoteHost: accepted.remoteHost) { try await PeerSession.serve($0, agent: agent, logger: quietLogger) }
                        }
                    }
                }
            }
            group.addTask {
                await withDiscardingTaskGroup { sessions in
                    for await accepted in self.listener.streams {
                        sessions.addTask {
                            try? await accepted.connection.serve(peerIdentity: InMemoryLab.identityBox(accepted.identity), peerUID: nil) {
                                try await PeerSession.serve($0, agent: agent, logger: quietLogger)
                            }
                        }
                    }
                }
            }
            group.addTask {
                await withDiscardingTaskGroup { sessions in
                    for await end in self.controlConnections.stream {
                        sessions.addTask {
                            await InMemoryLab.serve(end, peerUID: getuid()) { try await ControlSession.serve($0, agent: agent) }
                        }
                    }
                }
            }
            group.addTask {
                await withDiscardingTaskGroup { sessions in
                    for await end in self.streamConnections.stream {
                        sessions.addTask { try? await end.serve(peerIdentity: nil, peerUID: getuid()) { try await ControlSession.serve($0, agent: agent) } }
                    }
                }
            }
        }
    }

    /// A stream connection to this agent's control socket: an app's end of a pair of
    /// continuation streams, over pipes (``PipeChannels/appStream(group:)``).
    func connectStreams() async throws -> EncodedFrameChannel {
        let (app, agentEnd) = try await PipeChannels.appStream()
        guard case .enqueued = streamConnections.continuation.yield(agentEnd) else {
            agentEnd.close()
            throw HandoffError.connectionUnavailable("the in-memory agent \(name) stopped")
        }
        return app
    }

    /// A connection to this agent's control socket, in memory.
    func connectControl() async throws(HandoffError) -> any FrameConnection {
        let (app, agentEnd) = InMemoryPeerConnection.pair((nil, ControlProtocol.limits), (nil, ControlProtocol.limits))
        guard case .enqueued = controlConnections.continuation.yield(agentEnd) else { throw .connectionUnavailable("the in-memory agent \(name) stopped") }
        return app
    }

    /// A HandoffKit app connected to this agent in memory.
    func app(_ manifest: AppManifest, delegate: any HandoffApplicationDelegate) -> HandoffApplication {
        HandoffApplication(manifest: manifest, delegate: delegate, connect: { () async throws(HandoffError) in try await self.connectControl() },
                           connectStreams: { try await self.connectStreams() })
    }

    /// What DNS-SD would tell this agent about `other`: its instance, address and current
    /// (sealed) advertisement.
    func discover(_ other: InMemoryHost) async {
        await agent.handle(.resolved(Self.service(of: other, txtRecord: await other.agent.advertisedTXTRecord)))
    }

    /// `other`'s service as DNS-SD shows it with `txtRecord` (its advertisement now, or an older one).
    static func service(of other: InMemoryHost, txtRecord: [UInt8]) -> DiscoveredService {
        DiscoveredService(
            instanceName: other.agent.instanceName, serviceType: serviceType, domain: "local.", hostTarget: "\(other.name).local.",
            port: UInt16(other.listener.port), txtRecord: txtRecord, addresses: [other.listener.host], interfaceIndex: 2)
    }
}
