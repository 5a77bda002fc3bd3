/// A resolved peer service, as reported by `ServiceBrowser`.
public struct DiscoveredService: Sendable, Hashable {
    /// The instance name, e.g. `"h1"` (unescaped, may contain spaces and dots).
    public var instanceName: String
    /// The service type without a trailing dot, e.g. `"_handoff._tcp"`.
    public var serviceType: String
    /// The domain, e.g. `"local."`.
    public var domain: String
    /// The host the service runs on, e.g. `"h1.local."`.
    public var hostTarget: String
    /// The port in host byte order.
    public var port: UInt16
    /// The raw TXT rdata (length-prefixed strings), unparsed and unvalidated: peers of the same
    /// service type may publish anything.
    public var txtRecord: [UInt8]
    /// The host's addresses, from the A and AAAA queries on `hostTarget`, in the order to try
    /// them (``IPAddressText/connectionOrder(_:)``: IPv6 of wider scope, IPv4, IPv6 link-local
    /// with its scope, e.g. `fe80::1%eth0`); empty if none is known (yet).
    public var addresses: [String]
    /// The interface the service was resolved on.
    public var interfaceIndex: UInt32

    /// Creates a value; the browser fills these in from dns_sd replies.
    public init(
        instanceName: String,
        serviceType: String,
        domain: String,
        hostTarget: String,
        port: UInt16,
        txtRecord: [UInt8],
        addresses: [String],
        interfaceIndex: UInt32
    ) {
        self.instanceName = instanceName
        self.serviceType = serviceType
        self.domain = domain
        self.hostTarget = hostTarget
        self.port = port
        self.txtRecord = txtRecord
        self.addresses = addresses
        self.interfaceIndex = interfaceIndex
    }
}
