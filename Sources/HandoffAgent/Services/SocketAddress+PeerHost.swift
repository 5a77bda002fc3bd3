import HandoffCore
import NIOCore

extension SocketAddress {
    /// The address a peer connected from, written as the agent connects to it: an IPv4-mapped
    /// address (a dual-stack listener's view of an IPv4 peer) as IPv4, and a link-local IPv6
    /// address with the interface it arrived on (`fe80::1%eth0`). Nil for a Unix socket.
    var peerHost: String? {
        guard let address = ipAddress else { return nil }
        let host = IPAddressText.unmappingIPv4(address)
        guard case .v6(let v6) = self else { return host }
        return IPAddressText.scoped(host, interfaceName: IPAddressText.interfaceName(v6.address.sin6_scope_id))
    }
}
