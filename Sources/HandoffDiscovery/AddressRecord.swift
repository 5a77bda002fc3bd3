import HandoffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The address an A or AAAA record holds, written as text: a dotted quad, or an IPv6 address
/// (RFC 5952 form, as `inet_ntop` writes it) that carries its scope when it is link-local.
enum AddressRecord {
    /// The address in `rdata` of a record of `recordType`, nil when the rdata does not have the
    /// type's length. A link-local IPv6 address gets `%` and the name of `interfaceIndex` (the
    /// interface the record was received on): without it, it could not be connected to.
    static func text(recordType: UInt16, rdata: [UInt8], interfaceIndex: UInt32) -> String? {
        switch (recordType, rdata.count) {
        case (DNSSDConstants.typeA, 4):
            return rdata.map(String.init).joined(separator: ".")
        case (DNSSDConstants.typeAAAA, 16):
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard rdata.withUnsafeBytes({ inet_ntop(AF_INET6, $0.baseAddress, &buffer, socklen_t(buffer.count)) }) != nil else { return nil }
            let address = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return IPAddressText.scoped(address, interfaceName: IPAddressText.interfaceName(interfaceIndex))
        default:
            return nil
        }
    }
}
