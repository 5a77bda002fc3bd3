import HandoffCore

/// What `ServiceBrowser` knows about one browsed service instance, and the dns_sd operations it
/// keeps open for it.
///
/// The same instance is usually reported more than once by the browse (once per interface, and
/// with Avahi once per IP protocol on each interface); `sightings` counts them, and the instance
/// is resolved once, on one of its interfaces.
struct BrowsedInstance {
    /// An operation started for this instance, identified by a token unique within the browser so
    /// that late replies of replaced operations can be told apart and ignored.
    struct TrackedOperation {
        var token: UInt64
        var interfaceIndex: UInt32
        var operation: DNSServiceOperation
    }

    let instanceName: String
    /// As reported by the browse, e.g. `"_handoff._tcp."`; passed back to `DNSServiceResolve`.
    var serviceType: String
    /// As reported by the browse, e.g. `"local."`.
    var domain: String

    /// Browse "add" count per interface index, minus the "remove"s.
    var sightings: [UInt32: Int] = [:]
    /// Known from before the browse had to be restarted and not seen again since.
    var isStale = false

    /// The `DNSServiceResolve` kept open to follow SRV changes.
    var resolve: TrackedOperation?
    /// The `DNSServiceQueryRecord` for the TXT record of `fullName`. Avahi's resolve reports a
    /// TXT change only a second or more late (when the old record is flushed), sometimes with the
    /// previous value; the record query reports the new record as soon as it arrives.
    var txtQuery: TrackedOperation?
    /// The `DNSServiceQueryRecord` for the A records of `hostTarget`.
    var addressQuery: TrackedOperation?
    /// The `DNSServiceQueryRecord` for the AAAA records of `hostTarget`.
    var address6Query: TrackedOperation?
    var resolveFailures = 0
    var txtQueryFailures = 0
    var addressQueryFailures = 0
    var address6QueryFailures = 0

    /// The interface of the resolve that answered last (kept while a failed resolve is retried).
    var resolvedInterfaceIndex: UInt32?
    /// The escaped full service name from the resolve, e.g. `h1._handoff._tcp.local.`.
    var fullName: String?
    var hostTarget: String?
    var port: UInt16?
    /// The TXT record from the resolve; used until the TXT query has answered.
    var resolvedTXTRecord: [UInt8]?
    /// What the TXT query has reported; nil while no TXT query has been started.
    var queriedTXTRecords: QueriedTXTRecords?
    /// IPv4 and IPv6 addresses (link-local ones with their scope) in the order they were first
    /// seen, with how often each was added (Avahi may report the same record once per IP
    /// protocol). Reported in ``IPAddressText/connectionOrder(_:)``.
    private(set) var addresses: [String] = []
    private var addressCounts: [String: Int] = [:]
    /// Set when the TXT or an address query was (re)started: reports are held back until the TXT
    /// query and one of the address queries have answered (or the browser's hold timer with this
    /// token expires), so that a report carries an address and the TXT record as published
    /// (Avahi's resolve reorders the TXT strings and may report a superseded record). One
    /// address family is enough: an IPv4-only or IPv6-only host never answers the other.
    var reportHold: UInt64?
    /// Whether the A or the AAAA query has added an address since they were started.
    var addressQueryAnswered = false
    /// Set when a removed address or TXT record changed the instance: reports are held back
    /// until the browser's timer with this token expires, because a goodbye removes those records
    /// a moment before the service itself and reporting the change in between would be noise.
    var removalDebounce: UInt64?

    /// What the browser last reported as `.resolved`, nil if it never did.
    var lastReported: DiscoveredService?

    init(instanceName: String, serviceType: String, domain: String) {
        self.instanceName = instanceName
        self.serviceType = serviceType
        self.domain = domain
    }

    /// Whether a report is being held back waiting for the record queries' first answers.
    var isHoldingReport: Bool {
        guard reportHold != nil else { return false }
        let txtDone = txtQuery == nil || queriedTXTRecords?.hasAnswered == true
        let addressDone = (addressQuery == nil && address6Query == nil) || addressQueryAnswered
        return !(txtDone && addressDone)
    }

    /// The current TXT record: from the TXT query once it has answered, else the resolve's.
    var txtRecord: [UInt8]? {
        queriedTXTRecords?.current ?? resolvedTXTRecord
    }

    /// The interface to resolve on: the lowest index the instance is currently seen on.
    var preferredInterface: UInt32? {
        sightings.keys.min()
    }

    /// All operations still open for the instance.
    var operations: [DNSServiceOperation] {
        [resolve?.operation, txtQuery?.operation, addressQuery?.operation, address6Query?.operation].compactMap { $0 }
    }

    mutating func addSighting(on interfaceIndex: UInt32) {
        sightings[interfaceIndex, default: 0] += 1
        isStale = false
    }

    mutating func removeSighting(on interfaceIndex: UInt32) {
        guard let count = sightings[interfaceIndex] else { return }
        sightings[interfaceIndex] = count > 1 ? count - 1 : nil
    }

    mutating func addAddress(_ address: String) {
        if addressCounts[address] == nil { addresses.append(address) }
        addressCounts[address, default: 0] += 1
    }

    mutating func removeAddress(_ address: String) {
        guard let count = addressCounts[address] else { return }
        if count > 1 {
            addressCounts[address] = count - 1
        } else {
            addressCounts[address] = nil
            addresses.removeAll { $0 == address }
        }
    }

    mutating func clearAddresses() {
        addresses = []
        addressCounts = [:]
    }

    /// Forgets the resolve results and operations (after cancelling them, or when they died
    /// together with the browse); returns the operations to cancel. `lastReported` is kept so an
    /// unchanged service is not reported again once it is resolved anew.
    mutating func resetResolution() -> [DNSServiceOperation] {
        let open = operations
        resolve = nil
        txtQuery = nil
        addressQuery = nil
        address6Query = nil
        resolvedInterfaceIndex = nil
        fullName = nil
        hostTarget = nil
        port = nil
        resolvedTXTRecord = nil
        queriedTXTRecords = nil
        clearAddresses()
        reportHold = nil
        removalDebounce = nil
        addressQueryAnswered = false
        return open
    }

    /// The service as it should be reported now, or nil if it is not resolved enough to report.
    func currentService(serviceType reportedType: String) -> DiscoveredService? {
        guard !isHoldingReport, removalDebounce == nil, let resolvedInterfaceIndex, let hostTarget, let port,
            let txtRecord
        else { return nil }
        return DiscoveredService(
            instanceName: instanceName,
            serviceType: reportedType,
            domain: domain,
            hostTarget: hostTarget,
            port: port,
            txtRecord: txtRecord,
            addresses: IPAddressText.connectionOrder(addresses),
            interfaceIndex: resolvedInterfaceIndex)
    }
}
