/// A resource record (RFC 1035 §4.1.3), rdata already encoded.
public struct DNSRecord: Equatable, Sendable {
    public var name: DNSName
    public var type: UInt16
    public var recordClass: UInt16
    public var ttl: UInt32
    public var rdata: [UInt8]

    public init(name: DNSName, type: UInt16, recordClass: UInt16 = DNSRecord.classIN, ttl: UInt32, rdata: [UInt8]) {
        self.name = name
        self.type = type
        self.recordClass = recordClass
        self.ttl = ttl
        self.rdata = rdata
    }

    public static let typeA: UInt16 = 1
    public static let typeSOA: UInt16 = 6
    public static let typePTR: UInt16 = 12
    public static let typeTXT: UInt16 = 16
    public static let typeSRV: UInt16 = 33
    public static let typeTSIG: UInt16 = 250
    public static let typeANY: UInt16 = 255
    public static let classIN: UInt16 = 1
    /// RFC 2136 §2.4: in an update, "delete this exact record".
    public static let classNONE: UInt16 = 254
    /// RFC 2136 §2.4: in an update, "delete the whole RRset" (and TSIG's class).
    public static let classANY: UInt16 = 255

    /// PTR rdata: the target name.
    public static func ptrData(_ target: DNSName) -> [UInt8] { target.wire }

    /// SRV rdata (RFC 2782): priority, weight, port, target.
    public static func srvData(priority: UInt16 = 0, weight: UInt16 = 0, port: UInt16, target: DNSName) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendU16(priority)
        bytes.appendU16(weight)
        bytes.appendU16(port)
        return bytes + target.wire
    }

    /// A rdata of a dotted IPv4 address; nil if it is not one.
    public static func aData(_ address: String) -> [UInt8]? {
        let parts = address.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        return parts.count == 4 ? parts : nil
    }

    func encode(into bytes: inout [UInt8]) {
        bytes += name.wire
        bytes.appendU16(type)
        bytes.appendU16(recordClass)
        bytes.appendU32(ttl)
        bytes.appendU16(UInt16(rdata.count))
        bytes += rdata
    }

    /// Reads a record; names inside PTR and SRV rdata are rewritten uncompressed, so the rdata
    /// stands on its own.
    static func decode(_ reader: inout DNSReader) throws(DNSWireError) -> DNSRecord {
        let name = try reader.name()
        let type = try reader.u16()
        let recordClass = try reader.u16()
        let ttl = try reader.u32()
        let length = Int(try reader.u16())
        let end = reader.offset + length
        guard end <= reader.bytes.count else { throw .truncated }
        var rdata: [UInt8]
        switch type {
        case _ where length == 0:
            rdata = []  // an update's "delete" record
        case typePTR:
            rdata = try reader.name().wire
        case typeSRV:
            rdata = try reader.take(6)
            rdata += try reader.name().wire
        default:
            rdata = try reader.take(length)
        }
        guard reader.offset == end else { throw .truncated }
        return DNSRecord(name: name, type: type, recordClass: recordClass, ttl: ttl, rdata: rdata)
    }
}
