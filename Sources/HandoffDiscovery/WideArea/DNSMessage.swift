/// A DNS message (RFC 1035 §4.1): header and four sections. In an update (RFC 2136 §2) the
/// sections are zone, prerequisites, updates and additional data.
public struct DNSMessage: Equatable, Sendable {
    /// A question, or in an update the zone (name, SOA, IN).
    public struct Question: Equatable, Sendable {
        public var name: DNSName
        public var type: UInt16
        public var recordClass: UInt16 = DNSRecord.classIN
    }

    public var id: UInt16
    /// QR, opcode, AA, TC, RD, RA, Z and RCODE, as on the wire.
    public var flags: UInt16
    public var questions: [Question] = []
    public var answers: [DNSRecord] = []
    public var authority: [DNSRecord] = []
    public var additional: [DNSRecord] = []

    public static let opcodeQuery: UInt16 = 0
    public static let opcodeUpdate: UInt16 = 5
    /// RCODE names used in logs (RFC 1035, RFC 2136 §2.2).
    public static func rcodeName(_ rcode: UInt16) -> String {
        ["NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"]
            .dropFirst(Int(rcode)).first ?? "RCODE \(rcode)"
    }

    public var isResponse: Bool { flags & 0x8000 != 0 }
    public var opcode: UInt16 { flags >> 11 & 0xF }
    public var rcode: UInt16 { flags & 0xF }

    /// A recursive-desired-off query for `name`/`type`.
    public static func query(id: UInt16, name: DNSName, type: UInt16) -> DNSMessage {
        DNSMessage(id: id, flags: opcodeQuery << 11, questions: [Question(name: name, type: type)])
    }

    /// An update of `zone` making `updates` (RFC 2136 §2.5), no prerequisites.
    public static func update(id: UInt16, zone: DNSName, updates: [DNSRecord]) -> DNSMessage {
        DNSMessage(id: id, flags: opcodeUpdate << 11, questions: [Question(name: zone, type: DNSRecord.typeSOA)], authority: updates)
    }

    /// The wire form, names uncompressed.
    public var wire: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendU16(id)
        bytes.appendU16(flags)
        for count in [questions.count, answers.count, authority.count, additional.count] { bytes.appendU16(UInt16(count)) }
        for question in questions {
            bytes += question.name.wire
            bytes.appendU16(question.type)
            bytes.appendU16(question.recordClass)
        }
        for record in answers + authority + additional { record.encode(into: &bytes) }
        return bytes
    }

    /// Reads a message; throws if it is cut short or a name is malformed.
    public init(wire bytes: [UInt8]) throws(DNSWireError) {
        var reader = DNSReader(bytes)
        id = try reader.u16()
        flags = try reader.u16()
        let counts = [try reader.u16(), try reader.u16(), try reader.u16(), try reader.u16()]
        for _ in 0..<counts[0] {
            questions.append(Question(name: try reader.name(), type: try reader.u16(), recordClass: try reader.u16()))
        }
        for _ in 0..<counts[1] { answers.append(try DNSRecord.decode(&reader)) }
        for _ in 0..<counts[2] { authority.append(try DNSRecord.decode(&reader)) }
        for _ in 0..<counts[3] { additional.append(try DNSRecord.decode(&reader)) }
    }

    public init(id: UInt16, flags: UInt16, questions: [Question] = [], answers: [DNSRecord] = [],
                authority: [DNSRecord] = [], additional: [DNSRecord] = []) {
        self.id = id
        self.flags = flags
        self.questions = questions
        self.answers = answers
        self.authority = authority
        self.additional = additional
    }
}
