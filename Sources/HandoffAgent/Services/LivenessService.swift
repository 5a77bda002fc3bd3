import HandoffCore
import HandoffTransport
import HandoffTrust
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Watches the paired peers in the directory, so that a crashed or cut-off peer is shown
/// unreachable (and its activities withdrawn) within seconds, not after DNS-SD's record lifetime.
///
/// The shell of ``PeerLiveness``: it keeps one pinned TLS connection to each paired peer, sends
/// `ping` frames on it when the machine says so, reports what happens to the machine and tells
/// the agent about changes of reachability. Connections are opened with this device's
/// certificate and pinned to the peer's device ID, so the peer counts them as authenticated.
public actor LivenessService<C: Clock>: Service where C.Duration == Duration {
    typealias Machine = PeerLiveness<DeviceID, C.Instant>

    let agent: Agent
    private let connector: any PeerConnector
    let clock: C
    let logger: Logger
    var machine: Machine
    var targets: [DeviceID: LivenessTarget] = [:]
    /// Which of a target's endpoints to try next: a failed connect moves on to the next one.
    private var endpointIndex: [DeviceID: Int] = [:]
    /// Open connections, by attempt. Each change tells the agent which instances they bring pushed
    /// records of (``Agent/pushedInstances``), until the service stops (the browser stops with it).
    var connections: [Int: OpenConnection] = [:] {
        didSet { if !stopped { agent.pushedInstances.replace(with: Set(connections.values.compactMap { $0.subscription?.last?.instanceName })) } }
    }
    /// This device's advertising key as the open connections were last told it, and as the
    /// last look at the agent found it.
    private var announcedKey: AdvertisingKey?
    private var currentKey: AdvertisingKey?
    /// Attempts the machine closed before their connection opened.
    var abandoned: Set<Int> = []
    /// Open connections that subscribe now (``subscribeOpenConnection(to:)``), with their device.
    private var subscriptionsToSend: [(any FrameConnection, DeviceID, announce: Bool)] = []
    /// Shared connections peers dialled that this side serves without using them itself
    /// (``SharedConnectionRule``), by device: one is adopted before this side dials.
    var standingBy: [DeviceID: SharedLink] = [:]
    private var stopped = false

    /// - Parameters:
    ///   - connector: opens pinned TLS connections to peers; its connect timeout should be short
    ///     (about `timing.retryInterval`), since a LAN peer that answers does so in milliseconds.
    ///   - timing: `liveness.interval` and `liveness.timeout`.
    public init(agent: Agent, connector: any PeerConnector, clock: C, timing: PeerLiveness<DeviceID, C.Instant>.Timing, logger: Logger) {
        self.agent = agent
        self.connector = connector
        self.clock = clock
        self.logger = logger
        self.machine = Machine(timing: timing)
    }

    /// Probes over TCP in TLS with the agent's certificate, pinned to each peer's device ID, with
    /// the agent's `liveness.*` intervals.
    public init(agent: Agent, clock: C, logger: Logger) {
        let timing = PeerLiveness<DeviceID, C.Instant>.Timing(interval: agent.configuration.liveness.interval,
                                                             timeout: agent.configuration.liveness.timeout)
        self.init(agent: agent, connector: TCPPeerConnector(connectTimeout: timing.retryInterval, tls: agent.security.clientTLS),
                  clock: clock, timing: timing, logger: logger)
    }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                // Watches an adopted connection, and closes those it replaces.
                func start(_ adoption: SharedLinkAdoption, closing: [any FrameConnection]) {
                    group.addTask { await self.watch(adoption) }
                    for connection in closing { group.addTask { await connection.close() } }
                }
                for (adoption, closing) in await adoptOffered() { start(adoption, closing: closing) }
                for action in await step() {
                    switch action {
                    case .connect(let key, let attempt):
                        // A connection the peer dialled, standing by: this side cannot reach the peer, or did not try yet.
                        if let (adoption, closing) = await adoptStandingBy(key) {
                            start(adoption, closing: closing)
                            continue
                        }
                        guard let target = targets[key], !target.endpoints.isEmpty else { continue }
                        let endpoint = target.endpoints[(endpointIndex[key] ?? 0) % target.endpoints.count]
                        group.addTask { await self.probe(key, attempt: attempt, endpoint: endpoint, knownByAddress: target.subscribes) }
                    case .ping(_, let attempt, let sequence):
                        guard let connection = connections[attempt]?.connection else { continue }
                        group.addTask { try? await connection.send([PeerMessage.ping(sequence: sequence).frame]) }
                    default:
                        // Closing waits for TLS close_notify (seconds for a silent peer): never in this loop.
                        if let closing = await perform(action) { group.addTask { await closing.close() } }
                    }
                }
                for (connection, frame) in keyAnnouncements() { group.addTask { try? await connection.send([frame]) } }
                for (connection, frames) in await takeSubscriptionsToSend() { group.addTask { try? await connection.send(frames) } }
                heardOnAdoptedLinks()
                // Idle fetch connections past their time are closed here too, not only on the next fetch.
                agent.fetchPool.prune()
                do { try await clock.sleep(for: machine.timing.tickInterval) } catch { break }
            }
            stopped = true
            // This agent stops: each paired device is told, as DNS-SD's goodbye tells those that browse.
            let goodbye = PeerMessage.goodbye.frame
            for connection in connections.values.map(\.connection) {
                group.addTask {
                    try? await connection.send([goodbye])
                    await connection.close()
                }
            }
            connections.removeAll()
            // The fetch connections kept to peers close with the agent too.
            agent.fetchPool.discardAll()
        }
    }

    /// Follows the directory (peers added, gone, resolved afresh), then advances the machine.
    private func step() async -> [Machine.Action] {
        let (current, key) = await agent.livenessSnapshot()
        currentKey = key
        let now = clock.now
        var actions: [Machine.Action] = []
        for key in machine.keys where current[key] == nil {
            actions += machine.untrack(key)
            targets.removeValue(forKey: key)
            endpointIndex.removeValue(forKey: key)
            standingBy.removeValue(forKey: key)
            await agent.forgetPushedAdvertisements(of: key)
        }
        for (key, target) in current {
            if let old = targets[key] {
                // DNS-SD found it afresh, or it moved: a new address or port, or between DNS-SD
                // and its stored addresses.
                let routeChanged = old.subscribes != target.subscribes
                let moved = old.endpoints != target.endpoints || routeChanged
                if old.generation != target.generation || moved {
                    if moved { endpointIndex[key] = 0 }
                    // A working connection stays wherever the device moved: pinned to the device,
                    // it reaches it and brings its records either way, and a new one would cost a
                    // handshake (and could flip its reachability). The machine replaces it only if
                    // it says nothing once pinged (``PeerLiveness/resolved(_:now:endpointChanged:)``).
                    // One that did not subscribe (an old peer) subscribes now if the device is no
                    // longer shown by DNS-SD.
                    if routeChanged, target.subscribes { subscribeOpenConnection(to: key) }
                    actions += machine.resolved(key, now: now, endpointChanged: moved)
                    if routeChanged, target.subscribes, let kept = subscription(of: key), let record = kept.last {
                        // No longer shown by DNS-SD: what the device pushed last is its record now
                        // (as a new subscription would bring it at once).
                        await agent.receivedPushedAdvertisement(instanceName: record.instanceName, txtRecord: record.txtRecord, from: key,
                                                                at: kept.endpoint)
                    }
                }
            } else {
                // A peer is reachable until found otherwise: forget what an earlier watch found
                // (the device left and came back).
                machine.track(key, now: now)
                await agent.setReachability(key, reachable: true, lastHeard: nil)
            }
            targets[key] = target
        }
        return actions + machine.tick(now: now)
    }

    /// When this device's advertising key rotated (a device was unpaired, or a pairing failed
    /// late), each paired device still watched is told the new key at once on its pinned
    /// connection (`keys`; it answers with its own), so the records sealed with the new key are
    /// read at once rather than after a key probe's back-off.
    private func keyAnnouncements() -> [(any FrameConnection, Frame)] {
        // The key and the targets came from one look at the agent (``step()``): a key rotated
        // for an unpairing never goes to the device unpaired, which is no longer a target.
        guard let key = currentKey else { return [] }
        defer { announcedKey = key }
        guard let announcedKey, announcedKey != key else { return [] }
        let frame = PeerMessage.keys(advertisingKey: key.bytes).frame
        let told = connections.values.filter { targets[$0.key] != nil }
        logger.info("telling the paired devices this device's new advertising key", metadata: ["handoff.devices": "\(told.count)"])
        return told.map { ($0.connection, frame) }
    }

    /// Performs what an event returned: changes of reachability, and closes; returns the
    /// connection the caller must close.
    func perform(_ action: Machine.Action) async -> (any FrameConnection)? {
        switch action {
        case .close(_, let attempt):
            if let connection = connections.removeValue(forKey: attempt)?.connection { return connection }
            abandoned.insert(attempt)
        case .reachable(let key):
            await agent.setReachability(key, reachable: true, lastHeard: nil)
        case .unreachable(let key, let lastHeard):
            let date = lastHeard.map { agent.wallClock().addingTimeInterval(-$0.duration(to: clock.now).inSeconds) }
            await agent.setReachability(key, reachable: false, lastHeard: date)
        case .connect, .ping:
            break
        }
        return nil
    }

    /// One connection to a peer: hello, then pongs (and, when subscribed, its advertisements)
    /// until it closes or the machine closes it (``serve(_:key:attempt:endpoint:knownByAddress:theirs:adopted:source:)``).
    /// When the hellos agree to share it (``PeerHello/sharedConnection``), the peer may use it for
    /// its own requests too, and this side serves them (``SharedSourceRole``).
    private func probe(_ key: DeviceID, attempt: Int, endpoint: PeerEndpoint, knownByAddress: Bool) async {
        let connection: any FrameConnection
        // The fetches' limits: their replies come on this connection.
        let limits = await agent.client.limits
        do {
            connection = try await connector.connect(to: endpoint, limits: limits)
        } catch {
            logger.debug("liveness: cannot connect", metadata: ["handoff.peer": "\(endpoint)", "handoff.error": "\(error)"])
            abandoned.remove(attempt)
            endpointIndex[key, default: 0] += 1  // the next of its stored addresses, if it has several
            let answered = Self.peerAnswered(error)
            await event { $0.lost(key, attempt: attempt, now: $1, peerAnswered: answered) }
            return
        }
        guard adopt(connection, key: key, attempt: attempt, endpoint: endpoint) else {
            await connection.close()
            return
        }
        var refused = false
        let theirs: PeerHello
        do {
            switch try await PeerGreeting.greet(connection, hello: agent.sharingHello) {
            case .paired(let hello): theirs = hello
            case .noHello: throw LivenessProbeError(reason: "the peer did not answer hello")
            case .noPong:
                refused = true
                throw LivenessProbeError(reason: "the peer did not answer the first ping (it may have unpaired this device)")
            }
        } catch {
            logger.debug("liveness: connection ended", metadata: ["handoff.peer": "\(endpoint)", "handoff.error": "\(error)"])
            await connection.close()
            connections.removeValue(forKey: attempt)
            await event { $0.lost(key, attempt: attempt, now: $1, peerAnswered: refused) }
            return
        }
        let source = SourceSessionStateMachine.agreeToShare(agent.sharingHello, theirs)
            ? SharedSourceRole(link: SourceLink(dialled: connection, to: key, at: endpoint), peer: theirs) : nil
        await serve(connection, key: key, attempt: attempt, endpoint: endpoint, knownByAddress: knownByAddress, theirs: theirs, adopted: false,
                    source: source)
    }

    /// A connection to a peer once the hellos are exchanged, until it ends: the subscription (when
    /// the peer is `knownByAddress`, DNS-SD showing nothing of it, or its hello says it pushes its
    /// advertisement, ``PeerHello/pushesAdvertisements``: a change there then reaches this agent in
    /// one frame, not when DNS-SD next announces it), `announce`, then pongs and pushed records.
    /// When the hellos agree on multiplexing, it is also the connection the agent's fetches and
    /// `continued` notices to the peer go on (``MultiplexedLinks/share(_:device:)``): its `reply`
    /// frames go to them, and count as heard. `adopted`: a connection the peer dialled
    /// (``SharedLink``), already established in the machine. `source`: on a shared connection this
    /// side dialled, where the peer's own requests go.
    func serve(_ connection: any FrameConnection, key: DeviceID, attempt: Int, endpoint: PeerEndpoint, knownByAddress: Bool, theirs: PeerHello,
               adopted: Bool, source: SharedSourceRole?) async {
        let limits = await agent.client.limits
        var fetches: MultiplexedConnection?
        var failure: (any Error)?
        await withTaskGroup(of: Void.self) { group in
            if let source { group.addTask { await source.serve(agent: self.agent, logger: self.logger) } }
            do {
                let subscribe = knownByAddress || theirs.pushesAdvertisements
                // One write: the subscription, and word that this agent is back (``Rejoining``; to a
                // device known by address every time, as it may not see this one over DNS-SD either).
                let announce = await agent.announcement(to: key, subscribing: knownByAddress)
                let frames = (subscribe ? [PeerMessage.subscribe.frame] : []) + (announce.map { [$0] } ?? [])
                if !frames.isEmpty { try await connection.send(frames) }
                connections[attempt]?.announced = announce != nil
                if subscribe { connections[attempt]?.subscription = Subscription(endpoint: endpoint) }
                connections[attempt]?.greeted = true
                if agent.hello.multiplexing, theirs.multiplexing, let links = agent.fetchPool.links {
                    let shared = MultiplexedConnection(connection: connection, limits: limits)
                    links.share(shared, device: key.bytes)
                    (connection as? SharedLink)?.takeReplies(into: shared)
                    fetches = shared
                }
                if !adopted { await event { $0.established(key, attempt: attempt, now: $1) } }
                while let frame = try await connection.receive() {
                    if let source, SharedSourceRole.isForSource(frame.kind) {
                        source.frames.push(frame)
                        heard(key, attempt: attempt)
                        continue
                    }
                    switch frame.kind {
                    case .pong, .keys:
                        break  // keys: its answer to this device's new key (``keyAnnouncements()``)
                    case .reply where fetches != nil:
                        guard fetches?.received(frame) == true else { throw LivenessProbeError(reason: "a malformed reply frame") }
                    case .advertisement where connections[attempt]?.subscription != nil:
                        guard case .advertisement(let instanceName, let txtRecord) = try PeerMessage(frame: frame) else { continue }
                        // A connection the peer dialled reaches it where it announced, if it did. One
                        // change of `connections`, so the pushed instances are worked out once.
                        let place = (connection as? SharedLink)?.endpoint(orElse: endpoint) ?? endpoint
                        connections[attempt]?.subscription = Subscription(endpoint: place, last: .init(instanceName: instanceName, txtRecord: txtRecord))
                        await agent.receivedPushedAdvertisement(instanceName: instanceName, txtRecord: txtRecord, from: key, at: place)
                    default:
                        throw LivenessProbeError(reason: "unexpected \(frame.kind) frame")
                    }
                    heard(key, attempt: attempt)
                }
            } catch {
                failure = error
                logger.debug("liveness: connection ended", metadata: ["handoff.peer": "\(endpoint)", "handoff.error": "\(error)"])
            }
            source?.frames.finish()
            // The source side ends with the connection, which this side closes now.
            await connection.close()
        }
        if let fetches {
            agent.fetchPool.links?.unshare(fetches, device: key.bytes)
            fetches.readerEnded(failure)
        }
        connections.removeValue(forKey: attempt)
        // On a shared connection the peer's `goodbye` comes to its source side: it stops.
        if source?.goodbye.isSaid == true || (connection as? SharedLink)?.goodbye.isSaid == true {
            await event { $0.saidGoodbye(key, attempt: attempt, now: $1) }
        } else {
            await event { $0.lost(key, attempt: attempt, now: $1, peerAnswered: false) }
        }
    }

    private func adopt(_ connection: any FrameConnection, key: DeviceID, attempt: Int, endpoint: PeerEndpoint) -> Bool {
        guard !stopped, abandoned.remove(attempt) == nil else { return false }
        connections[attempt] = OpenConnection(key: key, connection: connection, endpoint: endpoint)
        return true
    }

    /// The open connection to `key` that subscribed to its advertisement, if any.
    private func subscription(of key: DeviceID) -> Subscription? {
        connections.values.lazy.compactMap { $0.key == key ? $0.subscription : nil }.first
    }

    /// The open connection to `key` that did not subscribe, once its hellos are exchanged, now
    /// subscribes: DNS-SD no longer shows the device, and the connection brings its records
    /// instead of being replaced by one that subscribes (with `announce`, as every connection
    /// that subscribes to a device known by address carries). The frames go from the run loop
    /// (``takeSubscriptionsToSend()``).
    private func subscribeOpenConnection(to key: DeviceID) {
        guard let (attempt, open) = connections.first(where: { $0.value.key == key && $0.value.greeted && $0.value.subscription == nil })
        else { return }
        connections[attempt]?.subscription = Subscription(endpoint: open.endpoint)
        connections[attempt]?.announced = true
        subscriptionsToSend.append((open.connection, key, announce: !open.announced))
    }

    /// The `subscribe` (and `announce`) frames for the connections that subscribe once open.
    private func takeSubscriptionsToSend() async -> [(any FrameConnection, [Frame])] {
        defer { subscriptionsToSend.removeAll() }
        var sends: [(any FrameConnection, [Frame])] = []
        for (connection, key, announces) in subscriptionsToSend {
            // At most one `announce` on a connection: one that carried it at its opening does not again.
            let announce = announces ? await agent.announcement(to: key, subscribing: true) : nil
            sends.append((connection, [PeerMessage.subscribe.frame] + (announce.map { [$0] } ?? [])))
        }
        return sends
    }

    /// An open connection: the device it is pinned to, where it reaches it, whether the hellos
    /// are exchanged, and its subscription, if it subscribed.
    struct OpenConnection {
        var key: DeviceID
        var connection: any FrameConnection
        var endpoint: PeerEndpoint
        /// Whether the peer dialled it (``SharedLink``), this side adopting it.
        var accepted: Bool { connection is SharedLink }
        var greeted = false
        /// Whether it carried `announce` (at most once on a connection).
        var announced = false
        var subscription: Subscription?
    }

    /// A connection's subscription to the peer's advertisement: where it reaches the peer, and
    /// the record the peer pushed last.
    struct Subscription {
        var endpoint: PeerEndpoint
        var last: AdvertisementFeed.Record?
    }

    private func heard(_ key: DeviceID, attempt: Int) {
        machine.heard(key, attempt: attempt, now: clock.now)
    }

    /// Whether a failed connect shows that an agent answers at the address: TLS refused it (it
    /// did not present the paired device's certificate), a matter of trust, not of liveness.
    static func peerAnswered(_ error: any Error) -> Bool {
        guard let error = error as? PeerConnectError else { return false }
        switch error.code {
        case .wrongCertificate, .handshakeFailed: return true
        default: return false
        }
    }

    private func event(_ body: (inout Machine, C.Instant) -> [Machine.Action]) async {
        let actions = body(&machine, clock.now)
        var closing: [any FrameConnection] = []
        for action in actions { if let connection = await perform(action) { closing.append(connection) } }
        for connection in closing { await connection.close() }
    }
}
