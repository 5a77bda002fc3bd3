import Logging
import ServiceLifecycle

/// Browses a service type in a unicast DNS domain (wide-area DNS-SD, RFC 6763 §11) by asking the
/// domain's server directly: the PTR records of `_handoff._tcp.DOMAIN`, then each instance's SRV
/// and TXT and its host's A records, every `interval` on the agent's clock. Reports on `events`
/// what `ServiceBrowser` reports for mDNS, so both feed the same discovery path.
///
/// Avahi's own wide-area browsing (`[wide-area] enable-wide-area=yes`, `browse-domains=`) finds
/// and resolves these services too, but only through the servers of the host's resolv.conf and
/// with avahi-daemon.conf changed on every machine; asking the server named in `wideArea.server`
/// keeps the whole setup in handoffd.json (docs/NETWORKS.md).
public final class WideAreaBrowser: Service, Sendable {
    /// Changes, in order. Meant for one consumer; finishes when `run()` returns.
    public let events: AsyncStream<BrowseEvent>
    let eventSink: AsyncStream<BrowseEvent>.Continuation
    let server: DNSServerAddress
    let domain: DNSName
    let serviceType: String
    let interval: Duration
    let clock: any Clock<Duration>
    let logger: Logger
    let timeout: Duration = .seconds(1)

    public init(server: DNSServerAddress, domain: DNSName, serviceType: String, interval: Duration = .seconds(1),
                clock: any Clock<Duration> = ContinuousClock(), logger: Logger) {
        (self.server, self.domain, self.serviceType, self.interval, self.clock) = (server, domain, serviceType, interval, clock)
        var logger = logger
        logger[metadataKey: "handoff.wideArea"] = "\(domain)"
        self.logger = logger
        (events, eventSink) = AsyncStream.makeStream(of: BrowseEvent.self)
    }

    /// Polls until graceful shutdown or cancellation.
    public func run() async throws {
        defer { eventSink.finish() }
        await cancelWhenGracefulShutdown { [self] in
            var known: [String: DiscoveredService] = [:]
            var failing = false
            while !Task.isCancelled {
                do {
                    let found = try await browse()
                    if failing { logger.notice("wide-area DNS-SD: \(server) answers again") }
                    failing = false
                    for (name, service) in found where known[name] != service { eventSink.yield(.resolved(service)) }
                    for name in known.keys where found[name] == nil { eventSink.yield(.removed(instanceName: name)) }
                    known = found
                } catch {
                    if !failing { logger.warning("wide-area DNS-SD: browsing \(domain) at \(server) failed: \(error)") }
                    failing = true
                }
                try? await clock.sleep(for: interval)
            }
        }
    }

    /// One pass: every instance of the service type in the domain, resolved.
    func browse() async throws -> [String: DiscoveredService] {
        guard let typeName = DNSName(labels: serviceType.split(separator: ".").map(String.init) + domain.labels) else { return [:] }
        var found: [String: DiscoveredService] = [:]
        for pointer in try await records(typeName, DNSRecord.typePTR) {
            var reader = DNSReader(pointer.rdata)
            let instance = try reader.name()
            guard let label = instance.labels.first, instance.labels.count > typeName.labels.count else { continue }
            guard let srv = try await records(instance, DNSRecord.typeSRV).first, srv.rdata.count > 6 else { continue }
            var srvReader = DNSReader(srv.rdata, offset: 4)
            let port = try srvReader.u16()
            let target = try srvReader.name()
            let txt = try await records(instance, DNSRecord.typeTXT).first?.rdata ?? []
            let addresses = try await records(target, DNSRecord.typeA).filter { $0.rdata.count == 4 }
                .map { $0.rdata.map(String.init).joined(separator: ".") }
            found[label] = DiscoveredService(
                instanceName: label, serviceType: serviceType, domain: domain.description, hostTarget: target.description,
                port: port, txtRecord: txt, addresses: addresses, interfaceIndex: 0)
        }
        return found
    }

    /// The answers of type `type` for `name` (none on NXDOMAIN).
    func records(_ name: DNSName, _ type: UInt16) async throws -> [DNSRecord] {
        let id = UInt16.random(in: 0...UInt16.max)
        let (response, _) = try await DNSUDPExchange.exchange(DNSMessage.query(id: id, name: name, type: type).wire, id: id, server: server, timeout: timeout)
        return response.answers.filter { $0.type == type && $0.name.matches(name) }
    }
}
