import Logging
import ServiceLifecycle

/// Registers this agent's DNS-SD service in a unicast DNS domain (wide-area DNS-SD, RFC 6763
/// §11) by TSIG-signed dynamic updates (RFC 2136, RFC 8945): the PTR, SRV and TXT records and an
/// A record of the address the agent reaches the server from. It registers when it starts and
/// whenever the TXT record changes (the same sealed TXT as over mDNS), and removes the records
/// on shutdown. A refused or unanswered update is logged as an error; the agent goes on with
/// mDNS.
public final class WideAreaRegistrar: Service, Sendable {
    /// Where and how to register.
    public struct Settings: Sendable {
        public var server: DNSServerAddress
        public var domain: DNSName
        public var key: TSIGKey
        public var serviceType: String
        public var instanceName: String
        public var port: UInt16
        /// How long to wait for the server's answer.
        public var timeout: Duration = .seconds(2)

        public init(server: DNSServerAddress, domain: DNSName, key: TSIGKey, serviceType: String, instanceName: String, port: UInt16) {
            (self.server, self.domain, self.key, self.serviceType, self.instanceName, self.port) = (server, domain, key, serviceType, instanceName, port)
        }
    }

    let settings: Settings
    let initialTXT: [UInt8]
    let logger: Logger
    let wallClockSeconds: @Sendable () -> UInt64
    let changes: AsyncStream<[UInt8]>
    let changeSink: AsyncStream<[UInt8]>.Continuation

    /// - Parameter wallClockSeconds: seconds since 1970, for TSIG's time signed.
    public init(settings: Settings, txtRecord: [UInt8], logger: Logger, wallClockSeconds: @escaping @Sendable () -> UInt64) {
        self.settings = settings
        self.initialTXT = txtRecord
        var logger = logger
        logger[metadataKey: "handoff.wideArea"] = "\(settings.domain)"
        self.logger = logger
        self.wallClockSeconds = wallClockSeconds
        (changes, changeSink) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Registers `txt` in place of the previous TXT record (at once, from `run()`).
    public func updateTXTRecord(_ txt: [UInt8]) { changeSink.yield(txt) }

    /// Registers, follows TXT changes until graceful shutdown or cancellation, then removes the
    /// records (if a registration was ever accepted).
    public func run() async throws {
        let (last, everRegistered) = await cancelWhenGracefulShutdown { [self] in await follow() }
        changeSink.finish()
        if everRegistered, let records = records(last, address: [0, 0, 0, 0]) {
            await send(records.removal, what: "removal")
        }
    }

    /// Registers the first TXT record and each change; returns the last one and whether any
    /// registration was accepted.
    func follow() async -> (last: [UInt8], everRegistered: Bool) {
        var current = initialTXT
        var registered = await register(current)
        var everRegistered = registered
        for await txt in changes where txt != current || !registered {
            current = txt
            registered = await register(txt)
            everRegistered = everRegistered || registered
        }
        return (current, everRegistered)
    }

    func records(_ txt: [UInt8], address: [UInt8]) -> DNSSDRecords? {
        DNSSDRecords(domain: settings.domain, serviceType: settings.serviceType, instance: settings.instanceName,
                     port: settings.port, txt: txt, address: address)
    }

    /// Registers the service with `txt`; true if the server accepted it.
    func register(_ txt: [UInt8]) async -> Bool {
        // The A record holds the address this host reaches the server from: learnt by a first exchange.
        guard let address = await localAddress() else { return false }
        guard let records = records(txt, address: address) else {
            logger.error("wide-area DNS-SD: the names in \(settings.domain) are too long to register")
            return false
        }
        return await send(records.registration, what: "registration")
    }

    /// The local IPv4 address toward the server, from a query of the zone's SOA.
    func localAddress() async -> [UInt8]? {
        let id = UInt16.random(in: 0...UInt16.max)
        let query = DNSMessage.query(id: id, name: settings.domain, type: DNSRecord.typeSOA)
        do {
            let (_, local) = try await DNSUDPExchange.exchange(query.wire, id: id, server: settings.server, timeout: settings.timeout)
            return DNSRecord.aData(local)
        } catch {
            logger.error("wide-area DNS-SD: DNS server \(settings.server) did not answer (\(error)); registering over mDNS only")
            return nil
        }
    }

    /// Sends a signed update; logs what the server said. True on NOERROR.
    @discardableResult
    func send(_ updates: [DNSRecord], what: String) async -> Bool {
        let id = UInt16.random(in: 0...UInt16.max)
        let update = DNSMessage.update(id: id, zone: settings.domain, updates: updates)
        let signed = settings.key.sign(update, timeSigned: wallClockSeconds())
        do {
            let (response, _) = try await DNSUDPExchange.exchange(signed, id: id, server: settings.server, timeout: settings.timeout)
            guard response.rcode == 0 else {
                logger.error("wide-area DNS-SD: \(settings.server) refused the \(what) of \(settings.instanceName) in \(settings.domain): \(Self.explain(response))")
                return false
            }
            logger.info("wide-area DNS-SD: \(what) of \(settings.instanceName) in \(settings.domain) accepted by \(settings.server)")
            return true
        } catch {
            logger.error("wide-area DNS-SD: the \(what) of \(settings.instanceName) in \(settings.domain) failed: \(error)")
            return false
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
