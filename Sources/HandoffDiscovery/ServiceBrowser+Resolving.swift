#if canImport(dnssd)
import dnssd
#else
import CDNSSD
#endif
import Logging
import ServiceLifecycle
import Synchronization

/// Resolving browsed instances, and the TXT and address queries that follow them.
extension ServiceBrowser {
    // MARK: - Resolving

    func startResolveIfNeeded(_ name: String, in state: inout State) -> [Effect] {
        guard !state.stopping, var instance = state.instances[name], instance.resolve == nil,
            let interfaceIndex = instance.preferredInterface
        else { return [] }
        let token = state.makeToken()
        let operation = DNSServiceOperation(
            name: "DNSServiceResolve",
            poller: poller,
            replyHandler: .resolve { [self] reply in resolved(reply, instanceName: name, token: token) },
            logger: logger.with(peer: name),
            onFinish: { [self] error in resolveFinished(instanceName: name, token: token, error: error) }
        ) { [serviceType = instance.serviceType, domain = instance.domain] ref, context in
            DNSServiceResolve(
                ref, 0, interfaceIndex, name, serviceType, domain, DNSServiceCallbacks.resolve, context)
        }
        instance.resolve = .init(token: token, interfaceIndex: interfaceIndex, operation: operation)
        state.instances[name] = instance
        state.liveOperations[token] = operation
        return [.start(operation)]
    }

    func resolved(_ reply: ResolveReply, instanceName name: String, token: UInt64) {
        let effects = state.withLock { state -> [Effect] in
            guard !state.stopping, var instance = state.instances[name], let resolve = instance.resolve,
                resolve.token == token
            else { return [] }
            instance.resolveFailures = 0
            instance.resolvedInterfaceIndex = resolve.interfaceIndex
            instance.port = reply.port
            instance.resolvedTXTRecord = reply.txtRecord
            var effects: [Effect] = []
            if instance.fullName != reply.fullName || instance.txtQuery == nil {
                if let query = instance.txtQuery { effects.append(.cancel(query.operation)) }
                instance.txtQuery = nil
                instance.fullName = reply.fullName
                instance.queriedTXTRecords = nil
            }
            if instance.hostTarget != reply.hostTarget || instance.addressQuery == nil || instance.address6Query == nil {
                for query in [instance.addressQuery, instance.address6Query].compactMap({ $0 }) {
                    effects.append(.cancel(query.operation))
                }
                instance.addressQuery = nil
                instance.address6Query = nil
                instance.hostTarget = reply.hostTarget
                instance.clearAddresses()
            }
            state.instances[name] = instance
            effects += startTXTQuery(name, in: &state)
            effects += startAddressQuery(name, in: &state)
            reportIfChanged(name, in: &state)
            return effects
        }
        apply(effects)
    }

    func resolveFinished(instanceName name: String, token: UInt64, error: DNSServiceError?) {
        state.withLock { state in
            state.liveOperations[token] = nil
            guard let error, !state.stopping, var instance = state.instances[name],
                instance.resolve?.token == token
            else { return }
            instance.resolve = nil
            instance.resolveFailures += 1
            let delay = backoff.delay(afterFailures: instance.resolveFailures)
            state.instances[name] = instance
            logger.debug(
                "Resolve failed; resolving again",
                metadata: ["handoff.peer": "\(name)", "dnssd.error": "\(error)", "handoff.retry.delay": "\(delay)"])
            state.timers?.yield(TimerRequest(delay: delay, timer: .retryResolve(instanceName: name)))
        }
    }

    // MARK: - TXT and address queries

    /// Which record query of an instance.
    enum QueryKind: String {
        case txt = "TXT"
        case address = "A"
        case address6 = "AAAA"

        /// The instance's query of this kind.
        var query: WritableKeyPath<BrowsedInstance, BrowsedInstance.TrackedOperation?> {
            switch self {
            case .txt: \.txtQuery
            case .address: \.addressQuery
            case .address6: \.address6Query
            }
        }

        /// The failures in a row of the instance's query of this kind.
        var failures: WritableKeyPath<BrowsedInstance, Int> {
            switch self {
            case .txt: \.txtQueryFailures
            case .address: \.addressQueryFailures
            case .address6: \.address6QueryFailures
            }
        }

        /// The record type queried.
        var recordType: UInt16 {
            switch self {
            case .txt: DNSSDConstants.typeTXT
            case .address: DNSSDConstants.typeA
            case .address6: DNSSDConstants.typeAAAA
            }
        }

        /// The timer that starts the instance's query of this kind again.
        func retryTimer(instanceName name: String) -> Timer {
            self == .txt ? .retryTXTQuery(instanceName: name) : .retryAddressQuery(instanceName: name)
        }
    }

    /// Starts the instance's TXT query unless one is running or the record is pushed
    /// (``receivesPushes(of:)``); `askedAgain`: made again because the last one left in doubt which
    /// record is the newest (``QueriedTXTRecords/asksAgain``).
    func startTXTQuery(_ name: String, in state: inout State, askedAgain: Bool = false) -> [Effect] {
        guard !state.pushed.contains(name), let instance = state.instances[name], instance.txtQuery == nil,
            let fullName = instance.fullName, !fullName.isEmpty
        else { return [] }
        return startQuery(.txt, for: name, recordName: fullName, askedAgain: askedAgain, in: &state)
    }

    /// Names the instances whose TXT records reach the caller by another path: their peers push
    /// them over a connection the caller keeps. The browser keeps no TXT query open for these
    /// (each dns_sd query is, with Avahi, a thread and a system-bus connection of its own) and
    /// reports the resolve's record for them: the last one the query had reported until the
    /// resolve reports another. Their resolve and address queries stay, so an address or port
    /// change is still seen. An instance leaving the set has its TXT query made again, and its
    /// reports wait for that query's first answer as at the start. Each call replaces the set.
    public func receivesPushes(of instanceNames: Set<String>) {
        let effects = state.withLock { state -> [Effect] in
            guard !state.stopping, state.pushed != instanceNames else { return [] }
            let before = state.pushed
            state.pushed = instanceNames
            var effects: [Effect] = []
            for name in instanceNames.subtracting(before) {
                guard var instance = state.instances[name], let query = instance.txtQuery else { continue }
                instance.resolvedTXTRecord = instance.txtRecord
                instance.txtQuery = nil
                instance.queriedTXTRecords = nil
                state.instances[name] = instance
                effects.append(.cancel(query.operation))
                logger.debug("TXT query closed: the peer pushes its record", metadata: ["handoff.peer": "\(name)"])
                // A report held for the query's answer goes now, with the resolve's record.
                reportIfChanged(name, in: &state)
            }
            for name in before.subtracting(instanceNames) {
                let started = startTXTQuery(name, in: &state)
                if !started.isEmpty {
                    logger.debug("Querying the TXT record again: the peer no longer pushes it", metadata: ["handoff.peer": "\(name)"])
                }
                effects += started
            }
            return effects
        }
        apply(effects)
    }

    /// Starts the A and the AAAA query of the instance, whichever is not running.
    func startAddressQuery(_ name: String, in state: inout State) -> [Effect] {
        guard let instance = state.instances[name], let hostTarget = instance.hostTarget, !hostTarget.isEmpty else { return [] }
        var effects: [Effect] = []
        for kind in [QueryKind.address, .address6] where state.instances[name]?[keyPath: kind.query] == nil {
            effects += startQuery(kind, for: name, recordName: hostTarget, in: &state)
        }
        return effects
    }

    /// Starts a `DNSServiceQueryRecord` for the instance's TXT, A or AAAA records, on the
    /// interface the instance is resolved on.
    func startQuery(
        _ kind: QueryKind, for name: String, recordName: String, askedAgain: Bool = false, in state: inout State
    ) -> [Effect] {
        guard !state.stopping, var instance = state.instances[name], let resolve = instance.resolve else {
            return []
        }
        let token = state.makeToken()
        let interfaceIndex = resolve.interfaceIndex
        let recordType = kind.recordType
        let operation = DNSServiceOperation(
            name: "DNSServiceQueryRecord",
            poller: poller,
            replyHandler: .query { [self] reply in answered(kind, reply, instanceName: name, token: token) },
            logger: logger.with(peer: name),
            onFinish: { [self] error in queryFinished(kind, instanceName: name, token: token, error: error) }
        ) { ref, context in
            DNSServiceQueryRecord(
                ref, 0, interfaceIndex, recordName, recordType, DNSSDConstants.classIN,
                DNSServiceCallbacks.query, context)
        }
        let tracked = BrowsedInstance.TrackedOperation(
            token: token, interfaceIndex: interfaceIndex, operation: operation)
        switch kind {
        case .txt:
            instance.queriedTXTRecords = QueriedTXTRecords(startedAt: .now, askedAgain: askedAgain)
        case .address, .address6:
            // Anew only when no address query runs: the retry of one family keeps what the
            // other has answered.
            if instance.addressQuery == nil && instance.address6Query == nil { instance.addressQueryAnswered = false }
        }
        instance[keyPath: kind.query] = tracked
        // Hold back reports until the new query has answered, at most `reportHoldDuration`.
        let hold = state.makeToken()
        instance.reportHold = hold
        state.timers?.yield(
            TimerRequest(delay: Self.reportHoldDuration, timer: .reportHoldOver(instanceName: name, token: hold)))
        state.instances[name] = instance
        state.liveOperations[token] = operation
        return [.start(operation)]
    }

    func answered(_ kind: QueryKind, _ reply: QueryReply, instanceName name: String, token: UInt64) {
        state.withLock { state in
            guard !state.stopping, var instance = state.instances[name] else { return }
            switch kind {
            case .txt:
                guard instance.txtQuery?.token == token, reply.recordType == DNSSDConstants.typeTXT else { return }
                instance.txtQueryFailures = 0
                if reply.isAdd {
                    let asked = instance.queriedTXTRecords?.asksAgain ?? false
                    instance.queriedTXTRecords?.add(reply.recordData, at: .now)
                    if !asked, instance.queriedTXTRecords?.asksAgain == true {
                        state.timers?.yield(TimerRequest(
                            delay: QueriedTXTRecords.cachedAnswerWindow, timer: .askTXTAgain(instanceName: name, token: token)))
                    }
                } else {
                    let before = instance.txtRecord
                    instance.queriedTXTRecords?.remove(reply.recordData)
                    if instance.txtRecord != before {
                        debounceRemoval(of: &instance, instanceName: name, in: &state)
                    }
                }
            case .address, .address6:
                guard let query = instance[keyPath: kind.query], query.token == token, reply.recordType == kind.recordType,
                    let address = AddressRecord.text(
                        recordType: reply.recordType, rdata: reply.recordData,
                        interfaceIndex: reply.interfaceIndex != 0 ? reply.interfaceIndex : query.interfaceIndex)
                else { return }
                instance[keyPath: kind.failures] = 0
                if reply.isAdd {
                    instance.addressQueryAnswered = true
                    instance.addAddress(address)
                } else {
                    let before = instance.addresses
                    instance.removeAddress(address)
                    if instance.addresses != before {
                        debounceRemoval(of: &instance, instanceName: name, in: &state)
                    }
                }
            }
            state.instances[name] = instance
            reportIfChanged(name, in: &state)
        }
    }

    /// Holds back the report of a change caused by a removal for `removalDebounceDuration`: a
    /// goodbye removes the records one by one just before the service itself.
    func debounceRemoval(of instance: inout BrowsedInstance, instanceName name: String, in state: inout State) {
        let debounce = state.makeToken()
        instance.removalDebounce = debounce
        state.timers?.yield(
            TimerRequest(
                delay: Self.removalDebounceDuration, timer: .removalDebounceOver(instanceName: name, token: debounce)))
    }

    func queryFinished(_ kind: QueryKind, instanceName name: String, token: UInt64, error: DNSServiceError?) {
        state.withLock { state in
            state.liveOperations[token] = nil
            guard let error, !state.stopping, var instance = state.instances[name],
                instance[keyPath: kind.query]?.token == token
            else { return }
            instance[keyPath: kind.query] = nil
            instance[keyPath: kind.failures] += 1
            state.instances[name] = instance
            let delay = backoff.delay(afterFailures: instance[keyPath: kind.failures])
            logger.debug(
                "Record query failed; querying again",
                metadata: [
                    "handoff.peer": "\(name)", "dnssd.record.type": "\(kind.rawValue)", "dnssd.error": "\(error)",
                    "handoff.retry.delay": "\(delay)",
                ])
            state.timers?.yield(TimerRequest(delay: delay, timer: kind.retryTimer(instanceName: name)))
        }
    }
}
