// A and AAAA rdata as address text, and the order a browsed instance reports its addresses in.
import HandoffCore
import Testing
@testable import HandoffDiscovery

@Suite("AddressRecord: A and AAAA records, link-local scopes")
struct AddressRecordTests {
    @Test func anARecordIsADottedQuad() {
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeA, rdata: [198, 18, 0, 7], interfaceIndex: 2) == "198.18.0.7")
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeA, rdata: [198, 18, 0], interfaceIndex: 2) == nil)
    }

    @Test func anAAAARecordIsAnIPv6AddressInItsShortForm() {
        let ula: [UInt8] = [0xfd, 0x00, 0x01, 0x98, 0x00, 0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x07]
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeAAAA, rdata: ula, interfaceIndex: 1) == "fd00:198:18::7")
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeAAAA, rdata: Array(ula.prefix(15)), interfaceIndex: 1) == nil)
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeTXT, rdata: ula, interfaceIndex: 1) == nil)
    }

    @Test func aLinkLocalAAAARecordCarriesTheNameOfItsInterface() throws {
        let linkLocal: [UInt8] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55]
        let loopback = try #require(IPAddressText.interfaceName(1))  // index 1 is lo on Linux
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeAAAA, rdata: linkLocal, interfaceIndex: 1)
                == "fe80::211:22ff:fe33:4455%\(loopback)")
        #expect(AddressRecord.text(recordType: DNSSDConstants.typeAAAA, rdata: linkLocal, interfaceIndex: 0) == "fe80::211:22ff:fe33:4455")
        #expect(IPAddressText.interfaceName(0) == nil)
    }

    @Test func aResolvedInstanceReportsWideIPv6ThenIPv4ThenLinkLocal() throws {
        var instance = BrowsedInstance(instanceName: "h1", serviceType: "_handoff._tcp.", domain: "local.")
        instance.resolvedInterfaceIndex = 2
        instance.hostTarget = "h1.local."
        instance.port = 52123
        instance.resolvedTXTRecord = [0]
        instance.addAddress("fe80::1%eth0")
        instance.addAddress("198.18.0.1")
        instance.addAddress("fd00:198:18::1")
        let service = try #require(instance.currentService(serviceType: "_handoff._tcp"))
        #expect(service.addresses == ["fd00:198:18::1", "198.18.0.1", "fe80::1%eth0"])
        #expect(instance.addresses == ["fe80::1%eth0", "198.18.0.1", "fd00:198:18::1"])  // as seen
    }
}
