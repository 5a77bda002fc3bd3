#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The written forms of IP addresses that the agent compares, orders and scopes: what the
/// listener's admission counts by, and the order in which a peer's discovered addresses are
/// tried.
public enum IPAddressText {
    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:192.0.2.1` → `192.0.2.1`);
    /// any other text unchanged. A dual-stack listener sees IPv4 peers in the mapped form: the
    /// same host must count as one address whichever way it arrives.
    public static func unmappingIPv4(_ address: String) -> String {
        let lowered = address.lowercased()
        for prefix in ["::ffff:", "0:0:0:0:0:ffff:"] where lowered.hasPrefix(prefix) {
            let rest = lowered.dropFirst(prefix.count)
            if isIPv4(rest) { return String(rest) }
        }
        return address
    }

    /// Whether `text` is a dotted-quad IPv4 address: four parts of one to three ASCII digits,
    /// each at most 255, leading zeros allowed. One pass over the UTF-8 bytes, nothing allocated
    /// (a peer's addresses are checked on every pushed advertisement). Any other byte, a
    /// combining mark after a digit included, makes it no address.
    public static func isIPv4<S: StringProtocol>(_ text: S) -> Bool {
        var dots = 0, digits = 0, value = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard digits > 0, dots < 3 else { return false }
                dots += 1
                digits = 0
                value = 0
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                guard digits <= 3, value <= 255 else { return false }
            default:
                return false
            }
        }
        return dots == 3 && digits > 0
    }

    /// Whether `address` is an IPv6 link-local address (fe80::/10), with or without a scope.
    public static func isLinkLocalIPv6(_ address: String) -> Bool {
        let lowered = address.lowercased()
        guard lowered.contains(":"), let first = lowered.split(separator: ":", omittingEmptySubsequences: false).first,
            first.count == 4, let value = UInt16(first, radix: 16)
        else { return false }
        return value & 0xffc0 == 0xfe80
    }

    /// The name of interface `index` (`if_indextoname`), nil for 0 or an unknown index.
    public static func interfaceName(_ index: UInt32) -> String? {
        guard index != 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(index, &buffer) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `address` with the scope an IPv6 link-local address needs to be reached
    /// (`fe80::1` on `eth0` → `fe80::1%eth0`); other addresses, and addresses that have a
    /// scope already, unchanged. Without a scope a link-local address names no interface,
    /// and connecting to it fails with EINVAL.
    public static func scoped(_ address: String, interfaceName: String?) -> String {
        guard let interfaceName, !interfaceName.isEmpty, !address.contains("%"), isLinkLocalIPv6(address) else { return address }
        return "\(address)%\(interfaceName)"
    }

    /// A peer's addresses in the order the agent tries them: IPv6 addresses of wider than
    /// link scope (ULA, global) first, as RFC 6724 prefers IPv6; then IPv4; then IPv6
    /// link-local ones, which hold only on the interface their scope names. The order within
    /// each group is kept (the order the addresses were first seen).
    public static func connectionOrder(_ addresses: [String]) -> [String] {
        func rank(_ address: String) -> Int {
            if !address.contains(":") { return 1 }
            return isLinkLocalIPv6(address) ? 2 : 0
        }
        return addresses.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
    }
}
