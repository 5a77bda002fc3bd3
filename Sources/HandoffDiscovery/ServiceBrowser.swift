#if canImport(dnssd)
import dnssd
#else
import CDNSSD
#endif
import Logging
import ServiceLifecycle
import Synchronization

/// Browses one DNS-SD service type, resolves every instance and follows its changes.
///
/// A ServiceLifecycle `Service`. While `run()` runs, the browser keeps a `DNSServiceBrowse` open
/// and, per instance, a `DNSServiceResolve` (host and port, following SRV changes), a
/// `DNSServiceQueryRecord` for the instance's TXT record (which, unlike Avahi's resolve, reports
/// a TXT change as soon as it arrives) and one each for the A and AAAA records of the instance's
/// host. No TXT query is kept for an instance whose record the caller gets pushed by the peer
/// itself (``receivesPushes(of:)``). Changes are reported on `events`: `.resolved` with the
/// complete current state whenever it changes, `.removed` when a reported instance goes away.
///
/// Each instance is resolved once, on one interface, however often the browse reports it. When
/// dns_sd fails (Avahi reports a restarted avahi-daemon as `kDNSServiceErr_Unknown`) the browse
/// is restarted with backoff; instances found again are reported only if they changed, and those
/// not found again within a few seconds are reported as `.removed`.
///
/// Services of the same type published by others may carry anything in their TXT records;
/// the browser passes the raw rdata on without interpreting it. At most `maximumInstances` are
/// followed at once; past that, instances the user could not read (see ``pin(_:)``) take turns
/// with the waiting ones (``InstanceSlots``), so junk instances cannot hide the others.
public final class ServiceBrowser: Service, Sendable {
    /// A delayed piece of work requested by a dns_sd callback and run by `run()`'s task group.
    enum Timer: Sendable {
        /// Stop holding back reports of an instance whose record queries have not answered.
        case reportHoldOver(instanceName: String, token: UInt64)
        /// Report an address removal if the instance is still there.
        case removalDebounceOver(instanceName: String, token: UInt64)
        case retryResolve(instanceName: String)
        case retryTXTQuery(instanceName: String)
        /// Make the TXT query `token` again: it left in doubt which record is the newest
        /// (``QueriedTXTRecords/asksAgain``).
        case askTXTAgain(instanceName: String, token: UInt64)
        case retryAddressQuery(instanceName: String)
        /// Report instances not found again after a browse restart as removed.
        case sweepStale(browseGeneration: UInt64)
        /// Give waiting instances a turn.
        case rotate
    }

    struct TimerRequest: Sendable {
        var delay: Duration
        var timer: Timer
    }

    /// Work to do after releasing the state lock.
    enum Effect {
        case start(DNSServiceOperation)
        case cancel(DNSServiceOperation)
    }

    struct State {
        var hasRun = false
        /// Set when `run()` is ending: no new operations are started and replies are ignored.
        var stopping = false
        var browseGeneration: UInt64 = 0
        /// The generation of the browse that is running, nil between a failure and the restart.
        var runningBrowseGeneration: UInt64?
        var browseDeliveredReplies = false
        /// The instances followed now.
        var instances: [String: BrowsedInstance] = [:]
        /// Instances waiting for a turn (no operations, only their sightings).
        var waiting: [String: BrowsedInstance] = [:]
        var slots = InstanceSlots<ContinuousClock.Instant>(limits: .init(capacity: ServiceBrowser.maximumInstances))
        var rotationScheduled = false
        /// Instances whose TXT records reach the caller by another path (``receivesPushes(of:)``).
        var pushed: Set<String> = []
        /// Resolves and queries whose refs have not been deallocated yet, by token.
        var liveOperations: [UInt64: DNSServiceOperation] = [:]
        var nextToken: UInt64 = 0
        var timers: AsyncStream<TimerRequest>.Continuation?

        mutating func makeToken() -> UInt64 {
            nextToken &+= 1
            return nextToken
        }
    }

    /// How long reports of an instance wait for the first answers of its TXT and A queries.
    static let reportHoldDuration: Duration = .seconds(1)
    /// How long a change caused by a record removal waits before it is reported (a goodbye
    /// removes the service right after its address and TXT records).
    static let removalDebounceDuration: Duration = .milliseconds(250)
    /// How long after a browse restart instances known before may take to be found again.
    static let staleGracePeriod: Duration = .seconds(5)
    /// A browse that lived this long counts as a success for the backoff, even without replies.
    static let healthyBrowseDuration: Duration = .seconds(2)
    /// The most dns_sd refs the followed instances may hold. With Avahi each ref is a connection
    /// to the system bus, which allows one user 256 by default (dbus-daemon's
    /// `max_connections_per_user`), counting every program the person runs: a table of 64
    /// instances took 255 of them, and the bus refused that user's other programs. Half is left.
    static let referenceBudget = 128
    /// At most this many instances are followed; each costs up to four refs (the resolve, the TXT,
    /// A and AAAA queries; three while its peer pushes its record, ``receivesPushes(of:)``).
    static let maximumInstances = referenceBudget / 4

    /// Changes, in order. Meant for one consumer; finishes when `run()` returns.
    public let events: AsyncStream<BrowseEvent>
    let eventSink: AsyncStream<BrowseEvent>.Continuation
    let serviceType: String
    let backoff: DNSServiceBackoff
    let logger: Logger
    let state = Mutex(State())
    /// The thread that creates, polls and deallocates the browse, resolve and query refs.
    let poller = DNSServicePoller(threadName: "dnssd-browser")

    /// - Parameters:
    ///   - serviceType: e.g. `"_handoff._tcp"`.
    ///   - backoff: delays between restarts of the browse, and of a resolve or query, after errors.
    ///   - logger: gets `handoff.service` metadata added.
    public init(serviceType: String, backoff: DNSServiceBackoff = .init(), logger: Logger) {
        self.serviceType = serviceType
        self.backoff = backoff
        var logger = logger
        logger[metadataKey: "handoff.service"] = "\(serviceType)"
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: BrowseEvent.self)
    }

    /// Names the instances the user could read (for `_handoff._tcp`: whose sealed advertisement
    /// it could open, or that a paired peer pushed). They keep their place when the table is full,
    /// and one waiting is followed at once; the others take turns.
    public func pin(_ instanceNames: Set<String>) {
        let effects = state.withLock { state -> [Effect] in
            guard !state.stopping, state.slots.pinned != instanceNames else { return [] }
            return apply(state.slots.pin(instanceNames, now: .now), in: &state)
        }
        apply(effects)
    }

    /// Browses until graceful shutdown or cancellation, restarting with backoff after errors.
    ///
    /// Before returning it closes every dns_sd ref it opened and finishes `events`. Returns
    /// normally on shutdown or cancellation; throws a `DNSServiceError` only for errors that
    /// retrying cannot fix (an invalid service type). Call it once.
    public func run() async throws {
        let firstRun = state.withLock { state -> Bool in
            defer { state.hasRun = true }
            return !state.hasRun
        }
        guard firstRun else {
            logger.info("ServiceBrowser.run() called more than once; ignoring")
            return
        }
        defer { eventSink.finish() }
        let (timerRequests, timerSink) = AsyncStream.makeStream(of: TimerRequest.self)
        state.withLock { $0.timers = timerSink }
        do {
            try await cancelWhenGracefulShutdown { [self] in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        defer { timerSink.finish() }
                        try await self.keepBrowsing()
                    }
                    for await request in timerRequests {
                        group.addTask {
                            do {
                                try await Task.sleep(for: request.delay)
                            } catch {
                                return
                            }
                            self.timerFired(request.timer)
                        }
                    }
                    group.cancelAll()
                }
            }
        } catch {
            await stopAllOperations()
            throw error
        }
        await stopAllOperations()
    }

    // MARK: - Browsing

    func keepBrowsing() async throws {
        var restarts = DNSServiceRestarts(backoff: backoff)
        while !Task.isCancelled {
            let (browse, generation, hasStaleInstances) = state.withLock {
                state -> (DNSServiceOperation, UInt64, Bool) in
                state.browseGeneration &+= 1
                state.browseDeliveredReplies = false
                let generation = state.browseGeneration
                state.runningBrowseGeneration = generation
                let hasStale = state.instances.values.contains { $0.isStale }
                return (makeBrowse(generation: generation), generation, hasStale)
            }
            let startedAt = ContinuousClock.now
            logger.debug("Browsing", metadata: ["dnssd.browse.generation": "\(generation)"])
            if hasStaleInstances {
                requestTimer(.sweepStale(browseGeneration: generation), after: Self.staleGracePeriod)
            }
            let error = await browse.run()
            state.withLock { $0.runningBrowseGeneration = nil }
            guard let error else { return }
            if Task.isCancelled { return }
            guard error.isRetryable else {
                logger.error("Browsing failed permanently", metadata: ["dnssd.error": "\(error)"])
                throw error
            }
            let (deliveredReplies, effects) = state.withLock { state -> (Bool, [Effect]) in
                var effects: [Effect] = []
                for name in Array(state.waiting.keys) {
                    state.waiting[name]!.isStale = true
                    state.waiting[name]!.sightings = [:]
                }
                for name in Array(state.instances.keys) {
                    // The instance's resolve and query fail along with the browse; resolve anew
                    // when the restarted browse finds the instance again.
                    state.instances[name]!.isStale = true
                    state.instances[name]!.sightings = [:]
                    effects += state.instances[name]!.resetResolution().map(Effect.cancel)
                }
                return (state.browseDeliveredReplies, effects)
            }
            apply(effects)
            let healthy = deliveredReplies || ContinuousClock.now - startedAt >= Self.healthyBrowseDuration
            guard
                await restarts.waitAfterFailure(
                    error, succeededSinceLastFailure: healthy, logger: logger, "Browsing failed; browsing again")
            else { return }
        }
    }

    func makeBrowse(generation: UInt64) -> DNSServiceOperation {
        DNSServiceOperation(
            name: "DNSServiceBrowse",
            poller: poller,
            replyHandler: .browse { [self] reply in browsed(reply, generation: generation) },
            logger: logger
        ) { [serviceType] ref, context in
            DNSServiceBrowse(
                ref, 0, DNSSDConstants.interfaceIndexAny, serviceType, nil, DNSServiceCallbacks.browse, context)
        }
    }

    func browsed(_ reply: BrowseReply, generation: UInt64) {
        let effects = state.withLock { state -> [Effect] in
            guard !state.stopping, state.browseGeneration == generation else { return [] }
            state.browseDeliveredReplies = true
            return reply.isAdd ? instanceAppeared(reply, in: &state) : instanceDisappeared(reply, in: &state)
        }
        apply(effects)
    }

    func instanceAppeared(_ reply: BrowseReply, in state: inout State) -> [Effect] {
        let name = reply.instanceName
        if state.instances[name]?.isStale == true {
            logger.debug(
                "Found instance again after browsing restarted",
                metadata: ["handoff.peer": "\(name)", "handoff.interface": "\(reply.interfaceIndex)"])
        }
        if state.instances[name] != nil {
            state.instances[name]!.addSighting(on: reply.interfaceIndex)
            return startResolveIfNeeded(name, in: &state)
        }
        if state.waiting[name] != nil {
            state.waiting[name]!.addSighting(on: reply.interfaceIndex)
            return []
        }
        logger.debug(
            "Found instance",
            metadata: ["handoff.peer": "\(name)", "handoff.interface": "\(reply.interfaceIndex)"])
        var instance = BrowsedInstance(instanceName: name, serviceType: reply.serviceType, domain: reply.domain)
        instance.addSighting(on: reply.interfaceIndex)
        state.waiting[name] = instance
        return apply(state.slots.appeared(name, now: .now), in: &state)
    }

    func instanceDisappeared(_ reply: BrowseReply, in state: inout State) -> [Effect] {
        let name = reply.instanceName
        if var waiting = state.waiting[name] {
            waiting.removeSighting(on: reply.interfaceIndex)
            state.waiting[name] = waiting.sightings.isEmpty ? nil : waiting
            if waiting.sightings.isEmpty { _ = state.slots.disappeared(name, now: .now) }
            return []
        }
        guard var instance = state.instances[name] else { return [] }
        instance.removeSighting(on: reply.interfaceIndex)
        if instance.sightings.isEmpty {
            state.instances[name] = nil
            return forget(instance) + apply(state.slots.disappeared(name, now: .now), in: &state)
        }
        var effects: [Effect] = []
        if let resolve = instance.resolve, instance.sightings[resolve.interfaceIndex] == nil {
            // Gone from the interface it was resolved on but still seen on another: move there.
            effects += instance.resetResolution().map(Effect.cancel)
        }
        state.instances[name] = instance
        return effects + startResolveIfNeeded(name, in: &state)
    }

    /// Moves instances between the followed table and the waiting ones as `changes` say, and
    /// keeps the rotation timer running while instances wait.
    func apply(_ changes: [InstanceSlots<ContinuousClock.Instant>.Change], in state: inout State) -> [Effect] {
        var effects: [Effect] = []
        for change in changes {
            switch change {
            case .activate(let name):
                guard let instance = state.waiting.removeValue(forKey: name) else { continue }
                state.instances[name] = instance
                effects += startResolveIfNeeded(name, in: &state)
            case .park(let name):
                guard let instance = state.instances.removeValue(forKey: name) else { continue }
                logger.debug("Too many instances; this one waits for a turn", metadata: ["handoff.peer": "\(name)"])
                if instance.lastReported != nil { eventSink.yield(.removed(instanceName: name)) }
                effects += instance.operations.map(Effect.cancel)
                var parked = BrowsedInstance(instanceName: name, serviceType: instance.serviceType, domain: instance.domain)
                parked.sightings = instance.sightings
                parked.isStale = instance.isStale
                state.waiting[name] = parked
            case .drop(let name):
                logger.debug("Too many instances waiting; forgetting one", metadata: ["handoff.peer": "\(name)"])
                state.waiting[name] = nil
            }
        }
        if !state.slots.waiting.isEmpty, !state.rotationScheduled, let timers = state.timers {
            state.rotationScheduled = true
            timers.yield(TimerRequest(delay: state.slots.limits.minimumTurn, timer: .rotate))
        }
        return effects
    }

    /// Reports a removed instance (if it was ever reported) and returns its operations to cancel.
    func forget(_ instance: BrowsedInstance) -> [Effect] {
        if instance.lastReported != nil {
            logger.info("Peer service removed", metadata: ["handoff.peer": "\(instance.instanceName)"])
            eventSink.yield(.removed(instanceName: instance.instanceName))
        } else {
            logger.debug("Instance removed", metadata: ["handoff.peer": "\(instance.instanceName)"])
        }
        return instance.operations.map(Effect.cancel)
    }

    // MARK: - Reporting

    /// Yields `.resolved` if the instance is resolved and differs from what was last reported.
    /// Called with the lock held so events leave in the order the state changed.
    func reportIfChanged(_ name: String, in state: inout State) {
        guard let instance = state.instances[name],
            let service = instance.currentService(serviceType: reportedServiceType(instance.serviceType)),
            service != instance.lastReported
        else { return }
        let isNew = instance.lastReported == nil
        state.instances[name]!.lastReported = service
        logger.log(
            level: isNew ? .info : .debug,
            isNew ? "Peer service resolved" : "Peer service changed",
            metadata: [
                "handoff.peer": "\(name)", "handoff.peer.host": "\(service.hostTarget)",
                "handoff.peer.port": "\(service.port)", "handoff.peer.addresses": "\(service.addresses)",
                "handoff.txt.length": "\(service.txtRecord.count)",
            ])
        eventSink.yield(.resolved(service))
        state.slots.reported(name)
    }

    func reportedServiceType(_ browsedType: String) -> String {
        browsedType.hasSuffix(".") ? String(browsedType.dropLast()) : browsedType
    }

}

extension Logger {
    func with(peer: String) -> Logger {
        var logger = self
        logger[metadataKey: "handoff.peer"] = "\(peer)"
        return logger
    }
}
