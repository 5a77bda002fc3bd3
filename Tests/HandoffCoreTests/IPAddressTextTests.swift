import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    @Test("a dotted quad is four parts of one to three ASCII digits, each at most 255", arguments: [
        ("192.0.2.1", true), ("0.0.0.0", true), ("255.255.255.255", true), ("010.001.000.9", true),
        ("256.1.1.1", false), ("1.2.3", false), ("1.2.3.4.5", false), ("1..3.4", false), (".1.2.3", false),
        ("1.2.3.", false), ("1.2.3.0004", false), ("1.2.3.-4", false), ("", false), ("1.2.3.4 ", false),
        ("fe80::1", false), ("١.٢.٣.٤", false),  // Arabic-Indic digits are digits, not ASCII ones
        // A combining mark after a digit: one Character that sorted between "0" and "9", which
        // the old check took for a digit and then crashed on (Int("1\u{301}") is nil).
        ("1\u{301}.2.3.4", false), ("1.2.3.4\u{301}", false),
    ])
    func dottedQuads(_ text: String, _ expected: Bool) {
        #expect(IPAddressText.isIPv4(text) == expected)
        #expect(IPAddressText.isIPv4(Substring(text)) == expected)
    }

    @Test("isIPv4 agrees with inet_pton's dotted-quad reading on random texts of digits and dots")
    func dottedQuadsAgainstInetPton() {
        var random = SplitMix64(seed: 0x1F4)
        let alphabet = Array("0123456789.9.2551x")
        for _ in 0..<20_000 {
            let length = Int(random.next() % 18)
            let text = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            // inet_pton refuses leading zeros, which the agent accepts (as before): compare
            // on texts whose parts have none.
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard !parts.contains(where: { $0.count > 1 && $0.first == "0" }) else { continue }
            var address = in_addr()
            let pton = inet_pton(AF_INET, text, &address) == 1
            #expect(IPAddressText.isIPv4(text) == pton, "\(text)")
        }
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
