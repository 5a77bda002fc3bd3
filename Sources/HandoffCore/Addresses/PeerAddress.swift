/// Where a paired device can be reached without DNS-SD: a host name or an IPv4 or IPv6 address,
/// and optionally a port (`handoff trust add ID --address ...`, `handoff pair HOST:PORT`).
///
/// Written as `HOST`, `HOST:PORT`, `[V6]`, `[V6]:PORT`, or a bare IPv6 address (no port); an
/// IPv6 link-local address keeps its scope (`fe80::1%eth0`).
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// The host name or address, without brackets.
    public var host: String
    /// The peer port; nil: the device's default.
    public var port: Int?

    public init(host: String, port: Int? = nil) {
        self.host = host
        self.port = port
    }

    /// Whether `host` is an IPv6 address (it has a colon).
    public var isIPv6: Bool { host.contains(":") }

    /// Whether `host` is an address (IPv6, or an IPv4 dotted quad) rather than a name.
    public var isNumeric: Bool { isIPv6 || IPAddressText.isIPv4(host) }

    /// The written form: `HOST`, `HOST:PORT`, `[V6]:PORT` or a bare `V6`.
    public var description: String {
        guard let port else { return host }
        return isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public static func < (a: PeerAddress, b: PeerAddress) -> Bool { a.description < b.description }

    /// Why a text is not an address.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String {
            "\(text) is not an address (\(reason)): give HOST, HOST:PORT, [IPV6]:PORT or an IPv6 address, e.g. laptop.lan:52123, 192.168.1.20 or [fe80::1%eth0]:52123"
        }
    }

    /// Reads the written form.
    public init(parsing text: String) throws(Invalid) {
        var host = Substring(text)
        while host.first == " " { host.removeFirst() }
        while host.last == " " { host.removeLast() }
        guard !host.isEmpty else { throw Invalid(text: "\"\(text)\"", reason: "it is empty") }
        var portText: Substring?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw Invalid(text: text, reason: "a [ without its ]") }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw Invalid(text: text, reason: "something other than :PORT after ]") }
                portText = rest.dropFirst()
            }
            guard host.contains(":") else { throw Invalid(text: text, reason: "brackets are for IPv6 addresses") }
        } else if let colon = host.firstIndex(of: ":"), host[host.index(after: colon)...].contains(":") == false {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw Invalid(text: text, reason: "no host") }
        let allowed: (Character) -> Bool = { $0.isLetter || $0.isNumber || "-._:%".contains($0) }
        guard host.allSatisfy(allowed) else { throw Invalid(text: text, reason: "the host has characters a host name or address cannot have") }
        var port: Int?
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw Invalid(text: text, reason: "the port must be 1 to 65535") }
            port = number
        }
        self.init(host: String(host), port: port)
    }
}
