import HandoffCore
import HandoffDiscovery
import HandoffTransport
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The agent: holds the local activities, knows the peers, answers peers' fetches, continues
/// peers' activities and hands them to the local handlers. Pure state lives in ``ActivityStore``
/// and ``PeerDirectory``; this actor is the shell that does the I/O.
public actor Agent {
    public nonisolated let configuration: AgentConfiguration
    /// A random ID for this run of the agent, advertised in TXT and sent in hello.
    public nonisolated let agentID: String
    public nonisolated let hello: PeerHello
    let logger: Logger
    nonisolated let advertiser: ServiceAdvertiser
    let client: ContinuationClient<ContinuousClock>
    let dispatcher: ActivityDispatcher
    /// The bound peer port.
    public nonisolated let port: Int

    private var store = ActivityStore()
    private var directory: PeerDirectory
    private var advertisedTXT: [UInt8]
    /// Continuations in flight, by activity ID, with the callers waiting for the same result.
    private var inFlight: [UUID: [CheckedContinuation<Result<JSONValue, HandoffError>, Never>]] = [:]

    /// - Parameters:
    ///   - port: the port the peer listener is bound to (advertised).
    ///   - connector: how to reach peers (TCP in the daemon).
    public init(configuration: AgentConfiguration, port: Int, connector: any PeerConnector, logger: Logger) {
        self.configuration = configuration
        self.port = port
        self.logger = logger
        let agentID = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        self.agentID = agentID
        self.hello = PeerHello(agentID: agentID, name: configuration.name)
        self.directory = PeerDirectory(ownAgentID: agentID)
        let initialTXT = ActivityAdvertisement(agentID: agentID, sequence: 0, current: nil).txtRecord
        self.advertisedTXT = initialTXT
        self.advertiser = ServiceAdvertiser(
            name: configuration.name, serviceType: configuration.serviceType, port: UInt16(port), txtRecord: initialTXT, logger: logger)
        self.client = ContinuationClient(
            connector: connector, clock: ContinuousClock(), hello: hello,
            limits: FrameLimits(maxUserInfoBytes: configuration.limits.maxUserInfoBytes),
            timeouts: ContinuationTimeouts(connect: configuration.limits.connectTimeout, fetch: configuration.limits.fetchTimeout))
        self.dispatcher = ActivityDispatcher(configuration: configuration, logger: logger)
    }

    /// The DNS-SD registration, to run in the service group.
    public nonisolated var advertiserService: ServiceAdvertiser { advertiser }

    // MARK: Local activities

    /// Makes an activity current on this host and advertises it. Returns its ID.
    public func publish(_ activity: Activity) -> UUID {
        store.publish(activity)
        logger.info("published activity", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(activity.id)"])
        refreshAdvertisement()
        return activity.id
    }

    /// Stops offering an activity.
    public func resign(id: UUID) throws(HandoffError) {
        guard let activity = store.resign(id: id) else {
            throw .handoffFailed("this agent holds no activity \(id); `handoff status` lists the ones it holds")
        }
        logger.info("resigned activity", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(id)"])
        refreshAdvertisement()
    }

    /// Drops expired activities and updates the advertisement.
    public func expireActivities(now: Date = Date()) {
        let expired = store.removeExpired(at: now)
        for activity in expired {
            logger.info("activity expired", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(activity.id)"])
        }
        refreshAdvertisement(now: now)
    }

    /// A held activity, for a peer's fetch.
    public func lookUp(id: UUID) -> Activity? { store.activity(id: id) }

    private func refreshAdvertisement(now: Date = Date()) {
        let current = store.current(at: now).map {
            ActivityAdvertisement.Current(id: $0.id, activityType: $0.activityType, title: $0.title)
        }
        let txt = ActivityAdvertisement(agentID: agentID, sequence: store.sequence, current: current).txtRecord
        guard txt != advertisedTXT else { return }
        advertisedTXT = txt
        advertiser.updateTXTRecord(txt)
    }

    // MARK: Peers

    /// Applies a discovery event.
    public func handle(_ event: BrowseEvent) {
        switch event {
        case .resolved(let service):
            let update = directory.update(
                name: service.instanceName, hostTarget: service.hostTarget, addresses: service.addresses,
                port: service.port, txtRecord: service.txtRecord)
            switch update {
            case .added, .changed:
                logger.info("peer \(update == .added ? "found" : "updated")", metadata: [
                    "handoff.peer": "\(service.instanceName)", "handoff.address": "\(service.addresses)", "handoff.port": "\(service.port)",
                ])
            case .ignored(let why):
                logger.info("ignoring service", metadata: ["handoff.peer": "\(service.instanceName)", "handoff.reason": "\(why)"])
            case .unchanged, .ownAdvertisement:
                break
            }
        case .removed(let name):
            if directory.remove(name: name) != nil { logger.info("peer gone", metadata: ["handoff.peer": "\(name)"]) }
        }
    }

    // MARK: Continuing

    /// Continues a peer's activity here: fetch it, then hand it to the handlers. A second request
    /// for an activity already being continued waits for the first and gets its result, so the
    /// handlers run once.
    public func continueActivity(id: UUID) async -> Result<JSONValue, HandoffError> {
        if inFlight[id] != nil {
            return await withCheckedContinuation { inFlight[id, default: []].append($0) }
        }
        inFlight[id] = []
        let result = await performContinuation(id: id)
        for waiter in inFlight.removeValue(forKey: id) ?? [] { waiter.resume(returning: result) }
        return result
    }

    private func performContinuation(id: UUID) async -> Result<JSONValue, HandoffError> {
        guard let peer = directory.peer(offering: id) else {
            if let gone = directory.departedPeer(offering: id) {
                return .failure(.connectionUnavailable(
                    "\(gone.name), which offered activity \(id), has left the network (its agent stopped or its host went away). Continue it once \(gone.name) is back."))
            }
            return .failure(.handoffFailed("no peer offers activity \(id) now; `handoff list` shows the activities on offer"))
        }
        let request = FetchRequest(activityID: id, continuationID: UUID())
        var metadata: Logger.Metadata = ["handoff.peer": "\(peer.name)", "handoff.id": "\(id)", "handoff.continuation": "\(request.continuationID)"]
        logger.info("continuing activity", metadata: metadata)
        let activity: Activity
        switch await client.fetch(request, from: peer.endpoint, peerName: peer.name) {
        case .failure(let error):
            metadata["handoff.error"] = "\(error.code.rawValue)"
            logger.info("continuation failed", metadata: metadata.merging(["handoff.message": "\(error.message)"]) { $1 })
            return .failure(error)
        case .success(let fetched): activity = fetched
        }
        guard activity.isOffered(at: Date()) else {
            return .failure(.handoffFailed("activity \(activity.activityType) from \(peer.name) expired before it could be continued"))
        }
        switch await dispatcher.deliver(activity, from: peer.name) {
        case .failure(let error):
            logger.info("continuation not handled", metadata: metadata.merging(["handoff.message": "\(error.message)"]) { $1 })
            return .failure(error)
        case .success(let delivery):
            logger.info("continuation delivered", metadata: metadata.merging(["handoff.by": "\(delivery.by)"]) { $1 })
            return .success(.object([
                "handled": .bool(true),
                "by": .string(delivery.by),
                "command": .array(delivery.command.map { .string($0) }),
                "peer": .string(peer.name),
                "continuationID": .string(request.continuationID.uuidString),
                "activity": activity.json,
            ]))
        }
    }

    // MARK: Views for the CLI

    /// `handoff status`.
    public func statusJSON() -> JSONValue {
        let now = Date()
        return .object([
            "name": .string(configuration.name),
            "registeredName": advertiser.registeredName.map { .string($0) } ?? .null,
            "agentID": .string(agentID),
            "port": .integer(port),
            "serviceType": .string(configuration.serviceType),
            "socketPath": .string(configuration.socketPath),
            "protocolVersion": .integer(PeerHello.supportedVersions.max()!),
            "sequence": .integer(store.sequence),
            "current": store.current(at: now).map { .string($0.id.uuidString) } ?? .null,
            "activities": .array(store.all.map { activity in
                .object([
                    "id": .string(activity.id.uuidString),
                    "activityType": .string(activity.activityType.rawValue),
                    "title": activity.title.map { .string($0) } ?? .null,
                    "expired": .bool(activity.isExpired(at: now)),
                ])
            }),
            "peers": .integer(directory.all.count),
        ])
    }

    /// `handoff peers`.
    public func peersJSON() -> JSONValue {
        .array(directory.all.map { peer in
            .object([
                "name": .string(peer.name),
                "agentID": .string(peer.advertisement.agentID),
                "host": .string(peer.hostTarget),
                "addresses": .array(peer.addresses.map { .string($0) }),
                "port": .integer(Int(peer.port)),
                "sequence": .integer(peer.advertisement.sequence),
                "current": peer.advertisement.current.map { .string($0.id.uuidString) } ?? .null,
            ])
        })
    }

    /// `handoff list`.
    public func listJSON() -> JSONValue {
        .array(directory.offered.map { offered in
            .object([
                "id": .string(offered.id.uuidString),
                "peer": .string(offered.peer),
                "activityType": .string(offered.activityType.rawValue),
                "title": offered.title.map { .string($0) } ?? .null,
            ])
        })
    }
}
