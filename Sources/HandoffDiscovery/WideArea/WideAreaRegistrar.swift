import Logging
import ServiceLifecycle

/// Registers this agent's DNS-SD service in a unicast DNS domain (wide-area DNS-SD, RFC 6763
/// §11) by TSIG-signed dynamic updates (RFC 2136, RFC 8945): the PTR, SRV and TXT records and an
/// A record of the address the agent reaches the server from. It registers when it starts and
/// whenever the advertisement changes (the same sealed TXT as over mDNS, under the instance name
/// it is sealed for: a rename moves the records to the new name in one update,
/// ``WideAreaRegistration``), and removes the records on shutdown. A refused or unanswered
/// update is logged as an error; the agent goes on with mDNS.
public final class WideAreaRegistrar: Service, Sendable {
    /// Where and how to register.
    public struct Settings: Sendable {
        public var server: DNSServerAddress
        public var domain: DNSName
        public var key: TSIGKey
        public var serviceType: String
        /// The first label of the agent's host name in the domain (`HOST.DOMAIN` A): the instance
        /// name the agent started with, kept when the instance is renamed.
        public var hostName: String
        public var port: UInt16
        /// How long to wait for the server's answer.
        public var timeout: Duration = .seconds(2)

        public init(server: DNSServerAddress, domain: DNSName, key: TSIGKey, serviceType: String, hostName: String, port: UInt16) {
            (self.server, self.domain, self.key, self.serviceType, self.hostName, self.port) = (server, domain, key, serviceType, hostName, port)
        }
    }

    /// One request to the server and its answer, with the local address it left from
    /// (``DNSUDPExchange`` unless a test gives another).
    typealias Exchange = @Sendable (_ request: [UInt8], _ id: UInt16) async throws(DNSExchangeError) -> (response: DNSMessage, localAddress: String)

    let settings: Settings
    let initial: WideAreaAdvertisement
    let logger: Logger
    let wallClockSeconds: @Sendable () -> UInt64
    let exchange: Exchange
    let changes: AsyncStream<WideAreaAdvertisement>
    let changeSink: AsyncStream<WideAreaAdvertisement>.Continuation

    /// - Parameter wallClockSeconds: seconds since 1970, for TSIG's time signed.
    public convenience init(settings: Settings, advertisement: WideAreaAdvertisement, logger: Logger, wallClockSeconds: @escaping @Sendable () -> UInt64) {
        self.init(settings: settings, advertisement: advertisement, logger: logger, wallClockSeconds: wallClockSeconds) { request, id throws(DNSExchangeError) in
            try await DNSUDPExchange.exchange(request, id: id, server: settings.server, timeout: settings.timeout)
        }
    }

    init(settings: Settings, advertisement: WideAreaAdvertisement, logger: Logger, wallClockSeconds: @escaping @Sendable () -> UInt64,
         exchange: @escaping Exchange) {
        self.settings = settings
        self.initial = advertisement
        var logger = logger
        logger[metadataKey: "handoff.wideArea"] = "\(settings.domain)"
        self.logger = logger
        self.wallClockSeconds = wallClockSeconds
        self.exchange = exchange
        (changes, changeSink) = AsyncStream.makeStream(of: WideAreaAdvertisement.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Registers `advertisement` in place of the previous one (at once, from `run()`): its TXT
    /// record under its instance name, the old name's records removed in the same update.
    public func advertise(_ advertisement: WideAreaAdvertisement) { changeSink.yield(advertisement) }

    /// Registers, follows changes until graceful shutdown or cancellation, then removes the
    /// records under every name the zone may hold them under.
    public func run() async throws {
        let registration = await cancelWhenGracefulShutdown { [self] in await follow() }
        changeSink.finish()
        let names = registration.onShutdown()
        guard !names.isEmpty, let removal = removal(of: names) else { return }
        await send(removal, what: "removal", of: names.joined(separator: ", "))
    }

    /// Registers the first advertisement and each change; returns what the zone may hold.
    func follow() async -> WideAreaRegistration {
        var registration = WideAreaRegistration()
        await register(initial, &registration)
        for await advertisement in changes { await register(advertisement, &registration) }
        return registration
    }

    /// Sends the update ``WideAreaRegistration`` decides on for `advertisement`, if any, and
    /// tells it the answer.
    func register(_ advertisement: WideAreaAdvertisement, _ registration: inout WideAreaRegistration) async {
        guard let update = registration.onAdvertisement(advertisement) else { return }
        registration.onAnswer(to: update, await send(update))
    }

    /// The records of `instance` with `txt` and the host's `address`; nil if a name is too long.
    func records(_ instance: String, txt: [UInt8], address: [UInt8]) -> DNSSDRecords? {
        DNSSDRecords(domain: settings.domain, serviceType: settings.serviceType, instance: instance, host: settings.hostName,
                     port: settings.port, txt: txt, address: address)
    }

    /// The records of `update`: the removal of each old name's instance records, then the
    /// registration of the new one. Nil if a name is too long.
    func records(of update: WideAreaRegistration.Update, address: [UInt8]) -> [DNSRecord]? {
        var records: [DNSRecord] = []
        for name in update.removing {
            guard let old = self.records(name, txt: [], address: address) else { return nil }
            records += old.instanceRemoval
        }
        guard let new = self.records(update.advertisement.instanceName, txt: update.advertisement.txtRecord, address: address) else { return nil }
        return records + new.registration
    }

    /// The removal of every record of the instances `names` and of the host; nil if a name is too long.
    func removal(of names: [String]) -> [DNSRecord]? {
        var records: [DNSRecord] = []
        for (index, name) in names.enumerated() {
            guard let instance = self.records(name, txt: [], address: [0, 0, 0, 0]) else { return nil }
            records += index == 0 ? instance.removal : instance.instanceRemoval
        }
        return records
    }

    /// Sends `update`; how the server answered.
    func send(_ update: WideAreaRegistration.Update) async -> WideAreaRegistration.Outcome {
        // The A record holds the address this host reaches the server from: learnt by a first exchange.
        guard let address = await localAddress() else { return .refused }
        guard let records = records(of: update, address: address) else {
            logger.error("wide-area DNS-SD: the names in \(settings.domain) are too long to register")
            return .refused
        }
        let name = update.advertisement.instanceName
        let what = update.removing.isEmpty ? "registration" : "registration (renamed from \(update.removing.joined(separator: ", ")))"
        return await send(records, what: what, of: name)
    }

    /// The local IPv4 address toward the server, from a query of the zone's SOA.
    func localAddress() async -> [UInt8]? {
        let id = UInt16.random(in: 0...UInt16.max)
        let query = DNSMessage.query(id: id, name: settings.domain, type: DNSRecord.typeSOA)
        do {
            let (_, local) = try await exchange(query.wire, id)
            return DNSRecord.aData(local)
        } catch {
            logger.error("wide-area DNS-SD: DNS server \(settings.server) did not answer (\(error)); registering over mDNS only")
            return nil
        }
    }

    /// Sends a signed update of `instance`'s records; logs what the server said.
    @discardableResult
    func send(_ updates: [DNSRecord], what: String, of instance: String) async -> WideAreaRegistration.Outcome {
        let id = UInt16.random(in: 0...UInt16.max)
        let update = DNSMessage.update(id: id, zone: settings.domain, updates: updates)
        let signed = settings.key.sign(update, timeSigned: wallClockSeconds())
        do {
            let (response, _) = try await exchange(signed, id)
            guard response.rcode == 0 else {
                logger.error("wide-area DNS-SD: \(settings.server) refused the \(what) of \(instance) in \(settings.domain): \(Self.explain(response))")
                return .refused
            }
            logger.info("wide-area DNS-SD: \(what) of \(instance) in \(settings.domain) accepted by \(settings.server)")
            return .accepted
        } catch {
            logger.error("wide-area DNS-SD: the \(what) of \(instance) in \(settings.domain) failed: \(error)")
            return .unanswered
        }
    }

    /// The response code, and the TSIG error a server gives for a key it does not accept.
    static func explain(_ response: DNSMessage) -> String {
        var text = DNSMessage.rcodeName(response.rcode)
        if let tsig = response.additional.first(where: { $0.type == DNSRecord.typeTSIG }),
            let signature = try? TSIGKey.Signature(rdata: tsig.rdata), signature.error != 0 {
            switch signature.error {
            case TSIGKey.errorBadSignature: text += " (TSIG BADSIG: the key's secret does not match the server's; check tsigSecret)"
            case TSIGKey.errorBadKey: text += " (TSIG BADKEY: the server knows no such key; check tsigKeyName)"
            case TSIGKey.errorBadTime: text += " (TSIG BADTIME: this host's clock is off)"
            default: text += " (TSIG error \(signature.error))"
            }
        } else if response.rcode == 9 || response.rcode == 5 {
            text += " (the key may not update this zone: check the server's update-policy)"
        }
        return text
    }
}
