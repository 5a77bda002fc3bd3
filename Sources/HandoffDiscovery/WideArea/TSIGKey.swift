import Crypto

/// A TSIG key (RFC 8945) with HMAC-SHA256: signs DNS messages, as `nsupdate -y` does.
public struct TSIGKey: Sendable {
    public let name: DNSName
    let secret: [UInt8]
    /// The only algorithm supported: `hmac-sha256.`.
    public static let algorithm = DNSName("hmac-sha256.")!
    /// The TSIG error BIND returns for a MAC that does not verify (RFC 8945 §5.2).
    public static let errorBadSignature: UInt16 = 16
    public static let errorBadKey: UInt16 = 17
    public static let errorBadTime: UInt16 = 18
    /// Allowed clock difference in seconds, as nsupdate sends.
    public static let fudge: UInt16 = 300

    public init(name: DNSName, secret: [UInt8]) {
        self.name = name
        self.secret = secret
    }

    /// The TSIG fields of a signed message.
    public struct Signature: Equatable, Sendable {
        public var algorithm: DNSName
        public var timeSigned: UInt64
        public var fudge: UInt16
        public var mac: [UInt8]
        public var originalID: UInt16
        public var error: UInt16
        public var otherData: [UInt8]

        /// Reads TSIG rdata.
        public init(rdata: [UInt8]) throws(DNSWireError) {
            var reader = DNSReader(rdata)
            algorithm = try reader.name()
            timeSigned = UInt64(try reader.u16()) << 32 | UInt64(try reader.u32())
            fudge = try reader.u16()
            mac = try reader.take(Int(try reader.u16()))
            originalID = try reader.u16()
            error = try reader.u16()
            otherData = try reader.take(Int(try reader.u16()))
        }

        init(timeSigned: UInt64, mac: [UInt8], originalID: UInt16) {
            (algorithm, self.timeSigned, fudge, self.mac, self.originalID, error, otherData) =
                (TSIGKey.algorithm, timeSigned, TSIGKey.fudge, mac, originalID, 0, [])
        }

        var rdata: [UInt8] {
            var bytes = algorithm.wire
            bytes.appendU16(UInt16(timeSigned >> 32))
            bytes.appendU32(UInt32(timeSigned & 0xFFFF_FFFF))
            bytes.appendU16(fudge)
            bytes.appendU16(UInt16(mac.count))
            bytes += mac
            bytes.appendU16(originalID)
            bytes.appendU16(error)
            bytes.appendU16(UInt16(otherData.count))
            return bytes + otherData
        }
    }

    /// The MAC of a request (RFC 8945 §4.3.3): over the message as it was before the TSIG record
    /// was added, then the TSIG variables (key name and algorithm in canonical form, class ANY,
    /// TTL 0, time signed, fudge, error, other data).
    public func mac(of unsigned: [UInt8], timeSigned: UInt64, fudge: UInt16 = TSIGKey.fudge, error: UInt16 = 0, otherData: [UInt8] = []) -> [UInt8] {
        var variables = name.canonicalWire
        variables.appendU16(DNSRecord.classANY)
        variables.appendU32(0)
        variables += Self.algorithm.canonicalWire
        variables.appendU16(UInt16(timeSigned >> 32))
        variables.appendU32(UInt32(timeSigned & 0xFFFF_FFFF))
        variables.appendU16(fudge)
        variables.appendU16(error)
        variables.appendU16(UInt16(otherData.count))
        variables += otherData
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret))
        hmac.update(data: unsigned)
        hmac.update(data: variables)
        return Array(hmac.finalize())
    }

    /// The message's wire form with a TSIG record signed at `timeSigned` (seconds since 1970).
    public func sign(_ message: DNSMessage, timeSigned: UInt64) -> [UInt8] {
        let unsigned = message.wire
        let signature = Signature(timeSigned: timeSigned, mac: mac(of: unsigned, timeSigned: timeSigned), originalID: message.id)
        var signed = message
        signed.additional.append(DNSRecord(name: name, type: DNSRecord.typeTSIG, recordClass: DNSRecord.classANY, ttl: 0, rdata: signature.rdata))
        return signed.wire
    }
}
