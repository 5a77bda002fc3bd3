import Foundation
import HandoffCore
import HandoffTrust
import Testing

@Suite("Trust store: where paired devices are reached without DNS-SD")
struct TrustStoreAddressTests {
    static func id(_ byte: UInt8) -> DeviceID { try! DeviceID(bytes: Array(repeating: byte, count: 32)) }

    @Test("addresses are saved, load back, and a store without them still loads")
    func roundTrip() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var store = TrustStore()
        let addresses = [PeerAddress(host: "laptop.lan", port: 52123), PeerAddress(host: "fe80::1%eth0", port: 52123)]
        store.add(PairedDevice(deviceID: Self.id(1), name: "laptop", addresses: addresses))
        store.add(PairedDevice(deviceID: Self.id(2), name: "phone"))
        try store.save(directory: dir.path)
        let loaded = try TrustStore.load(directory: dir.path)
        #expect(loaded == store)
        #expect(loaded.device(Self.id(1))?.addresses == addresses)
        let json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("trust.json")))) as? [String: Any])
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.first { $0["name"] as? String == "laptop" }?["addresses"] as? [String] == ["laptop.lan:52123", "[fe80::1%eth0]:52123"])
        #expect(devices.first { $0["name"] as? String == "phone" }?["addresses"] == nil, "no key when there are none")
    }

    @Test("adding a device again keeps the addresses known and adds the new ones")
    func merges() {
        var store = TrustStore()
        store.add(PairedDevice(deviceID: Self.id(1), name: "laptop", addresses: [PeerAddress(host: "10.0.0.2", port: 7000)]))
        store.add(PairedDevice(deviceID: Self.id(1), name: "laptop", addresses: [PeerAddress(host: "laptop.lan"), PeerAddress(host: "10.0.0.2", port: 7000)]))
        #expect(store.device(Self.id(1))?.addresses == [PeerAddress(host: "10.0.0.2", port: 7000), PeerAddress(host: "laptop.lan")])
    }

    @Test("an address that does not read is a corrupt store, naming the device")
    func corrupt() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var store = TrustStore()
        store.add(PairedDevice(deviceID: Self.id(1), name: "laptop"))
        try store.save(directory: dir.path)
        let path = dir.file("trust.json")
        let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "\"name\" : \"laptop\"", with: "\"name\" : \"laptop\", \"addresses\": [\"h1:0\"]")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect { try TrustStore.load(directory: dir.path) } throws: { "\($0)".contains("laptop") && "\($0)".contains("h1:0") }
    }

    @Test("where a device was last found is kept (at most four, each with a port), saved, loaded back, and kept when the device is added again")
    func lastKnown() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var store = TrustStore()
        store.add(PairedDevice(deviceID: Self.id(1), name: "laptop"))
        let found = (1...6).map { PeerAddress(host: "10.0.0.\($0)", port: 7000) }
        let changed = store.rememberAddresses(found + [PeerAddress(host: "laptop.lan")], for: Self.id(1))
        #expect(changed)
        #expect(store.device(Self.id(1))?.lastKnownAddresses == Array(found.prefix(TrustStore.lastKnownLimit)))
        let again = store.rememberAddresses(found, for: Self.id(1))
        #expect(!again, "the same addresses change nothing")
        let unpaired = store.rememberAddresses(found, for: Self.id(2))
        #expect(!unpaired, "not paired")
        let portless = store.rememberAddresses([PeerAddress(host: "10.0.0.9")], for: Self.id(1))
        #expect(!portless, "an address without a port is no use")
        store.add(PairedDevice(deviceID: Self.id(1), name: "laptop"))
        #expect(store.device(Self.id(1))?.lastKnownAddresses.count == TrustStore.lastKnownLimit)
        try store.save(directory: dir.path)
        #expect(try TrustStore.load(directory: dir.path) == store)
        let text = try String(contentsOfFile: dir.file("trust.json"), encoding: .utf8)
        #expect(text.contains("\"lastKnown\""))
    }
}
