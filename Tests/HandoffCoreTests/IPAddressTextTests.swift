import HandoffCore
import HandoffTestSupport
import Testing

@Suite("IPAddressText: v4-mapped addresses, link-local scopes, the order addresses are tried in")
struct IPAddressTextTests {
    @Test func v4MappedAddressesAreTheirIPv4Address() {
        #expect(IPAddressText.unmappingIPv4("::ffff:198.18.0.1") == "198.18.0.1")
        #expect(IPAddressText.unmappingIPv4("::FFFF:10.0.0.2") == "10.0.0.2")
        #expect(IPAddressText.unmappingIPv4("0:0:0:0:0:ffff:10.0.0.3") == "10.0.0.3")
        #expect(IPAddressText.unmappingIPv4("10.0.0.4") == "10.0.0.4")
        #expect(IPAddressText.unmappingIPv4("fd00:198:18::1") == "fd00:198:18::1")
        #expect(IPAddressText.unmappingIPv4("::ffff:c612:1") == "::ffff:c612:1")  // not dotted: left alone
        #expect(IPAddressText.unmappingIPv4("::ffff:300.1.1.1") == "::ffff:300.1.1.1")
    }

    @Test func linkLocalIsFe80Slash10() {
        #expect(IPAddressText.isLinkLocalIPv6("fe80::1"))
        #expect(IPAddressText.isLinkLocalIPv6("FE80::a:b%eth0"))
        #expect(IPAddressText.isLinkLocalIPv6("febf::1"))
        #expect(!IPAddressText.isLinkLocalIPv6("fec0::1"))
        #expect(!IPAddressText.isLinkLocalIPv6("fd00:198:18::1"))
        #expect(!IPAddressText.isLinkLocalIPv6("::1"))
        #expect(!IPAddressText.isLinkLocalIPv6("198.18.0.1"))
    }

    @Test func onlyLinkLocalAddressesGetAScope() {
        #expect(IPAddressText.scoped("fe80::1", interfaceName: "eth0") == "fe80::1%eth0")
        #expect(IPAddressText.scoped("fe80::1%eth1", interfaceName: "eth0") == "fe80::1%eth1")
        #expect(IPAddressText.scoped("fe80::1", interfaceName: nil) == "fe80::1")
        #expect(IPAddressText.scoped("fd00::1", interfaceName: "eth0") == "fd00::1")
        #expect(IPAddressText.scoped("198.18.0.1", interfaceName: "eth0") == "198.18.0.1")
    }

    @Test func wideIPv6ThenIPv4ThenLinkLocalKeepingTheOrderWithin() {
        let seen = ["fe80::2%eth0", "198.18.0.2", "fd00:198:18::2", "10.1.0.2", "2001:db8::2", "fe80::3%eth0"]
        #expect(IPAddressText.connectionOrder(seen) == ["fd00:198:18::2", "2001:db8::2", "198.18.0.2", "10.1.0.2", "fe80::2%eth0", "fe80::3%eth0"])
        #expect(IPAddressText.connectionOrder(["198.18.0.1"]) == ["198.18.0.1"])
        #expect(IPAddressText.connectionOrder([]) == [])
    }

    @Test func anEndpointTriesTheOtherAddressesAfterTheFirst() {
        let endpoint = PeerEndpoint(addresses: ["fd00::2", "198.18.0.2"], orHost: "h2.local.", port: 52123)
        #expect(endpoint.host == "fd00::2")
        #expect(endpoint.hosts == ["fd00::2", "198.18.0.2"])
        #expect(endpoint.description == "[fd00::2]:52123")
        let byName = PeerEndpoint(addresses: [], orHost: "h2.local.", port: 52123)
        #expect(byName.hosts == ["h2.local."])
    }

    @Test("a dual-stack listener's v4-mapped peer shares its IPv4 address's admission bucket")
    func admissionCountsV4MappedAsIPv4() {
        let clock = ManualClock()
        var admission = ConnectionAdmission<ManualClock.Instant>(limits: .init(maxUnauthenticatedPerAddress: 2))
        #expect(admission.admit(address: "::ffff:198.18.0.9", now: clock.now).isAdmitted)
        #expect(admission.admit(address: "198.18.0.9", now: clock.now).isAdmitted)
        #expect(!admission.admit(address: "::ffff:198.18.0.9", now: clock.now).isAdmitted)
        #expect(admission.unauthenticatedCount(address: "198.18.0.9") == 2)
        #expect(admission.unauthenticatedCount(address: "::ffff:198.18.0.9") == 2)
        #expect(admission.trackedAddressCount == 1)
    }
}
