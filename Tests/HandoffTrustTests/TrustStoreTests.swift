import Foundation
import HandoffTrust
import Testing

@Suite("Trust store: paired devices on disk")
struct TrustStoreTests {
    static func id(_ byte: UInt8) -> DeviceID { try! DeviceID(bytes: Array(repeating: byte, count: 32)) }
    static let pairedAt = Date(timeIntervalSince1970: 1_746_100_800)

    static func sample() -> TrustStore {
        var store = TrustStore()
        store.add(PairedDevice(deviceID: id(2), name: "phone", advertisingKey: .random(), pairedAt: pairedAt))
        store.add(PairedDevice(deviceID: id(1), name: "laptop", advertisingKey: nil, pairedAt: pairedAt.addingTimeInterval(60)))
        store.add(PairedDevice(deviceID: id(3), name: "laptop", advertisingKey: .random(), pairedAt: Date()))
        return store
    }

    @Test("a saved store loads back the same, with a private file")
    func roundTrip() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = Self.sample()
        try store.save(directory: dir.path)
        #expect(try TrustStore.load(directory: dir.path) == store)
        #expect(try TemporaryDirectory.permissions(dir.file("trust.json")) == 0o600)
        #expect(try TemporaryDirectory.permissions(dir.path) == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["trust.json"])
    }

    @Test("the file has the documented JSON shape")
    func jsonShape() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = Self.sample()
        try store.save(directory: dir.path)
        let json = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.file("trust.json")))) as? [String: Any])
        #expect(json["version"] as? Int == 1)
        #expect(json["advertisingKey"] as? String == store.ownAdvertisingKey.base64)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.count == 3)
        #expect(devices[0]["deviceID"] as? String == Self.id(1).description)
        #expect(devices[0]["name"] as? String == "laptop")
        #expect(devices[0]["advertisingKey"] == nil)
        #expect(devices[0]["pairedAt"] as? String == "2025-05-01T12:01:00Z")
        #expect(devices[2]["advertisingKey"] as? String == store.device(Self.id(2))?.advertisingKey?.base64)
    }

    @Test("a missing file makes a new store and saves it at once")
    func missingFile() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let store = try TrustStore.load(directory: dir.path + "/nested")
        #expect(store.devices.isEmpty)
        #expect(FileManager.default.fileExists(atPath: dir.path + "/nested/trust.json"))
        #expect(try TrustStore.load(directory: dir.path + "/nested").ownAdvertisingKey == store.ownAdvertisingKey)
    }

    @Test("devices are sorted by name, then ID")
    func sorted() {
        #expect(Self.sample().devices.map(\.deviceID) == [Self.id(1), Self.id(3), Self.id(2)])
    }

    @Test("re-adding a device replaces it, keeping its advertising key when the new entry has none")
    func replace() throws {
        var store = Self.sample()
        let key = try #require(store.device(Self.id(2))?.advertisingKey)
        store.add(PairedDevice(deviceID: Self.id(2), name: "a phone", advertisingKey: nil))
        #expect(store.devices.count == 3)
        #expect(store.device(Self.id(2))?.name == "a phone")
        #expect(store.device(Self.id(2))?.advertisingKey == key)
        #expect(store.devices.first?.deviceID == Self.id(2))
        let newKey = AdvertisingKey.random()
        store.add(PairedDevice(deviceID: Self.id(2), name: "a phone", advertisingKey: newKey))
        #expect(store.device(Self.id(2))?.advertisingKey == newKey)
    }

    @Test("a device may not take another paired device's advertising key, nor this device's own (a forged `keys` message)")
    func keyOfAnotherDeviceRefused() throws {
        var store = Self.sample()
        let phoneKey = try #require(store.device(Self.id(2))?.advertisingKey)
        let laptopKey = try #require(store.device(Self.id(3))?.advertisingKey)
        for (claimed, holder) in [(phoneKey, "phone"), (laptopKey, "laptop")] {
            let error = #expect(throws: TrustStoreError.self) { try store.updateAdvertisingKey(claimed, for: Self.id(1)) }
            #expect(error?.message.contains(holder) == true)
        }
        let own = #expect(throws: TrustStoreError.self) { try store.updateAdvertisingKey(store.ownAdvertisingKey, for: Self.id(1)) }
        #expect(own?.message.contains("own advertising key") == true)
        #expect(store.device(Self.id(1))?.advertisingKey == nil, "nothing was stored")
        // Its own key again is fine; a fresh one too.
        let same = try store.updateAdvertisingKey(phoneKey, for: Self.id(2))
        let fresh = try store.updateAdvertisingKey(.random(), for: Self.id(1))
        #expect(!same)
        #expect(fresh)
    }

    @Test("a device's public key is stored, kept on re-adding, and read back")
    func publicKeyStored() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let identity = SealedAdvertisementTests.identity
        var store = Self.sample()
        store.add(PairedDevice(deviceID: identity.deviceID, name: "signer", advertisingKey: .random()))
        let learnt = store.updatePublicKey(identity.publicKey, for: identity.deviceID)
        let again = store.updatePublicKey(identity.publicKey, for: identity.deviceID)
        let unpaired = store.updatePublicKey(identity.publicKey, for: Self.id(9))
        #expect(learnt && !again && !unpaired)
        store.add(PairedDevice(deviceID: identity.deviceID, name: "renamed"))
        #expect(store.device(identity.deviceID)?.publicKey == identity.publicKey)
        try store.save(directory: dir.path)
        let loaded = try TrustStore.load(directory: dir.path)
        #expect(loaded == store)
        #expect(loaded.device(identity.deviceID)?.publicKey == identity.publicKey)
        let text = try String(contentsOfFile: dir.file("trust.json"), encoding: .utf8)
        #expect(text.contains("\"publicKey\" : \"\(identity.publicKey.base64)\""))
    }

    @Test("unpairing a device rotates this device's advertising key")
    func removeRotates() {
        var store = Self.sample()
        let before = store.ownAdvertisingKey
        #expect(store.remove(Self.id(9)) == nil)
        #expect(store.ownAdvertisingKey == before)
        #expect(store.remove(Self.id(2))?.name == "phone")
        #expect(!store.isPaired(Self.id(2)))
        #expect(store.isPaired(Self.id(1)))
        #expect(store.ownAdvertisingKey != before)
    }

    @Test("a paired device's advertising key can be updated; an unpaired one's cannot")
    func updateKey() throws {
        var store = Self.sample()
        let key = AdvertisingKey.random()
        let first = try store.updateAdvertisingKey(key, for: Self.id(1))
        let again = try store.updateAdvertisingKey(key, for: Self.id(1))
        let unpaired = try store.updateAdvertisingKey(key, for: Self.id(9))
        #expect(first)
        #expect(!again)
        #expect(!unpaired)
        #expect(store.device(Self.id(1))?.advertisingKey == key)
        #expect(!store.isPaired(Self.id(9)))
    }

    static let corruptFiles: [String] = [
        "{not json",
        "",
        #"{"version": 1, "devices": []}"#,
        #"{"version": 1, "advertisingKey": "short", "devices": []}"#,
        #"{"version": 1, "advertisingKey": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "devices": [{"deviceID": "nope", "name": "x", "pairedAt": "2025-05-01T12:00:00Z"}]}"#,
        #"{"version": 1, "advertisingKey": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "devices": [{"deviceID": "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2", "name": "x", "pairedAt": "yesterday"}]}"#,
        #"{"version": 1, "advertisingKey": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "devices": [{"deviceID": "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2", "pairedAt": "2025-05-01T12:00:00Z"}]}"#,
    ]

    @Test("a corrupt file is an error naming the file and how to recover", arguments: corruptFiles)
    func corrupt(_ contents: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try dir.create()
        try dir.write("trust.json", Data(contents.utf8))
        let error = #expect(throws: TrustStoreError.self) { try TrustStore.load(directory: dir.path) }
        #expect(error?.message.contains(dir.file("trust.json")) == true)
        #expect(error?.message.contains("is corrupt") == true)
        #expect(error?.message.contains("remove it") == true)
        // The file is left as it was, for the person to inspect.
        #expect(try String(contentsOfFile: dir.file("trust.json"), encoding: .utf8) == contents)
    }

    @Test("a file from a newer format version says so")
    func newerVersion() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try dir.create()
        try dir.write("trust.json", Data(#"{"version": 2, "whatever": true}"#.utf8))
        let error = #expect(throws: TrustStoreError.self) { try TrustStore.load(directory: dir.path) }
        #expect(error?.message.contains("format version 2") == true)
    }

    @Test("a device listed twice is an error, not silently merged")
    func duplicate() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try dir.create()
        let entry = #"{"deviceID": "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2", "name": "x", "pairedAt": "2025-05-01T12:00:00Z"}"#
        let file = #"{"version": 1, "advertisingKey": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "devices": ["# + entry + "," + entry + "]}"
        try dir.write("trust.json", Data(file.utf8))
        let error = #expect(throws: TrustStoreError.self) { try TrustStore.load(directory: dir.path) }
        #expect(error?.message.contains("listed twice") == true)
    }

    @Test("advertising keys are 32 bytes and round-trip through base64")
    func advertisingKey() throws {
        let key = AdvertisingKey.random()
        #expect(key.bytes.count == 32)
        #expect(key.base64.count == 44)
        #expect(try AdvertisingKey(base64: key.base64) == key)
        #expect(AdvertisingKey.random() != key)
        #expect(throws: TrustStoreError.self) { try AdvertisingKey(bytes: [1, 2, 3]) }
        #expect(throws: TrustStoreError.self) { try AdvertisingKey(base64: "!!") }
    }
}
