/// What `handoff doctor` saw of this host, outside the agent: its interfaces, its firewalls'
/// listings and systemd-resolved's multicast DNS setting. Gathered by thin shells (the CLI);
/// judged by ``DoctorVerdicts``.
public struct HostObservations: Sendable, Equatable {
    /// A network interface (`getifaddrs`, `/sys/class/net/NAME/flags`).
    public struct Interface: Sendable, Equatable {
        public var name: String
        public var up: Bool
        public var loopback: Bool
        /// IFF_MULTICAST.
        public var multicast: Bool
        /// Its IPv4 and IPv6 addresses.
        public var addresses: [String]

        public init(name: String, up: Bool, loopback: Bool, multicast: Bool, addresses: [String]) {
            self.name = name
            self.up = up
            self.loopback = loopback
            self.multicast = multicast
            self.addresses = addresses
        }
    }

    /// A firewall's listing, as its own tool printed it.
    public enum FirewallListing: Sendable, Equatable {
        /// The tool is not installed.
        case notInstalled
        /// The tool ran but could not list (not root, service not running): its words.
        case unreadable(String)
        /// The listing (`nft list ruleset`, `iptables -S`, `firewall-cmd --list-all`, `ufw status`).
        case listed(String)
    }

    /// A firewall tool's name and listing.
    public struct Firewall: Sendable, Equatable {
        /// `nftables`, `iptables`, `ip6tables`, `firewalld` or `ufw`.
        public var tool: String
        public var listing: FirewallListing

        public init(tool: String, listing: FirewallListing) {
            self.tool = tool
            self.listing = listing
        }
    }

    public var interfaces: [Interface]
    public var firewalls: [Firewall]
    /// systemd-resolved's MulticastDNS setting (`yes`, `resolve`, `no`); nil when resolved is not running.
    public var resolvedMulticastDNS: String?

    public init(interfaces: [Interface], firewalls: [Firewall], resolvedMulticastDNS: String?) {
        self.interfaces = interfaces
        self.firewalls = firewalls
        self.resolvedMulticastDNS = resolvedMulticastDNS
    }
}
