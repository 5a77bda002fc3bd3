/// One DNS-SD service instance in a unicast DNS domain (RFC 6763 over RFC 2136): the updates
/// that register it and the ones that remove it again.
///
/// For instance `handoff-5115f36a5ed0` of `_handoff._tcp` in `handoff.test.`:
/// - `_handoff._tcp.handoff.test.` PTR `handoff-5115f36a5ed0._handoff._tcp.handoff.test.`
/// - the instance's SRV (port, target `handoff-5115f36a5ed0.handoff.test.`) and TXT
/// - `handoff-5115f36a5ed0.handoff.test.` A the agent's address
///
/// The host name is the agent's own (`host`), kept when the instance is renamed
/// (`handoff-5115f36a5ed0 #2`): an SRV target and an A record's owner are host names, which a
/// space and `#` do not belong in (BIND 9 refuses such an A record, "bad owner name
/// (check-names)", and with it the whole update).
public struct DNSSDRecords: Sendable {
    public var domain: DNSName
    public var serviceType: DNSName
    public var instanceName: DNSName
    public var hostName: DNSName
    public var port: UInt16
    public var txt: [UInt8]
    public var address: [UInt8]
    public var ttl: UInt32

    /// `host`: the first label of the host name (the SRV's target, the A record's owner); the
    /// instance name if nil. Nil if a name would be malformed (too long).
    public init?(domain: DNSName, serviceType: String, instance: String, host: String? = nil, port: UInt16, txt: [UInt8], address: [UInt8],
                 ttl: UInt32 = 120) {
        guard let type = DNSName(labels: serviceType.split(separator: ".").map(String.init) + domain.labels),
            let instanceName = type.prepending(instance), let host = domain.prepending(host ?? instance)
        else { return nil }
        (self.domain, self.serviceType, self.instanceName, self.hostName) = (domain, type, instanceName, host)
        (self.port, self.txt, self.address, self.ttl) = (port, txt.isEmpty ? [0] : txt, address, ttl)
    }

    private var ptr: DNSRecord { DNSRecord(name: serviceType, type: DNSRecord.typePTR, ttl: ttl, rdata: DNSRecord.ptrData(instanceName)) }

    /// Replaces whatever the instance had (SRV, TXT, A) with the current records, and adds the PTR.
    public var registration: [DNSRecord] {
        [
            Self.deleteRRset(instanceName, DNSRecord.typeSRV),
            Self.deleteRRset(instanceName, DNSRecord.typeTXT),
            Self.deleteRRset(hostName, DNSRecord.typeA),
            ptr,
            DNSRecord(name: instanceName, type: DNSRecord.typeSRV, ttl: ttl, rdata: DNSRecord.srvData(port: port, target: hostName)),
            DNSRecord(name: instanceName, type: DNSRecord.typeTXT, ttl: ttl, rdata: txt),
            DNSRecord(name: hostName, type: DNSRecord.typeA, ttl: ttl, rdata: address),
        ]
    }

    /// Removes the PTR to this instance and every record of the instance and its host name.
    public var removal: [DNSRecord] {
        instanceRemoval + [Self.deleteRRset(hostName, DNSRecord.typeANY)]
    }

    /// Removes the PTR to this instance and every record of the instance (its SRV and TXT), but
    /// not its host's: what a rename takes away from the name the instance had.
    public var instanceRemoval: [DNSRecord] {
        var deletePTR = ptr
        (deletePTR.recordClass, deletePTR.ttl) = (DNSRecord.classNONE, 0)
        return [deletePTR, Self.deleteRRset(instanceName, DNSRecord.typeANY)]
    }

    /// RFC 2136 §2.5.2 (or §2.5.3 with type ANY): class ANY, TTL 0, no rdata.
    static func deleteRRset(_ name: DNSName, _ type: UInt16) -> DNSRecord {
        DNSRecord(name: name, type: type, recordClass: DNSRecord.classANY, ttl: 0, rdata: [])
    }
}
