import HandoffTrust
import Testing

@Suite("Sealed advertisement: a TXT record only paired devices can read, and only its device can write")
struct SealedAdvertisementTests {
    /// The sender, and another paired device (which holds the sender's advertising key too).
    static let identity = makeIdentity("sender")
    static let otherIdentity = makeIdentity("other")
    static var device: DeviceID { identity.deviceID }
    static var other: DeviceID { otherIdentity.deviceID }
    static let key = AdvertisingKey.random()
    static let instance = "handoff-0123456789ab"

    static func makeIdentity(_ name: String) -> DeviceIdentity {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        return try! DeviceIdentity.loadOrCreate(directory: dir.path, commonName: name)
    }

    /// The sender as a receiver knows it.
    static var sender: SealedAdvertisement.Sender { .init(deviceID: device, advertisingKey: key, publicKey: identity.publicKey) }

    /// Opens as a receiver paired with the sender (and with `others`), for `instance`.
    static func open(_ parsed: SealedAdvertisement.Public, instanceName: String = instance,
                     senders: [SealedAdvertisement.Sender] = [sender]) -> SealedAdvertisement.Opened? {
        guard case .opened(let opened) = SealedAdvertisement.open(parsed, instanceName: instanceName, senders: senders) else { return nil }
        return opened
    }
    static let plaintext = Array("v=1 id=A1 seq=3 type=com.example.notes.edit title=Shopping list".utf8)

    /// TXT rdata from strings: each prefixed by its length byte.
    static func txt(_ strings: [String]) -> [UInt8] {
        strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    /// The strings of TXT rdata, or nil when a length byte runs past the end.
    static func strings(_ record: [UInt8]) -> [String]? {
        var result: [String] = []
        var i = 0
        while i < record.count {
            let length = Int(record[i])
            i += 1
            guard i + length <= record.count else { return nil }
            result.append(String(decoding: record[i..<(i + length)], as: UTF8.self))
            i += length
        }
        return result
    }

    static func record(_ plaintext: [UInt8] = plaintext, pairingName: String? = nil, timestamp: UInt64 = 1_746_100_800,
                       instanceName: String = instance, key: AdvertisingKey = key, signer: DeviceIdentity = identity) -> [UInt8] {
        SealedAdvertisement.txtRecord(sealing: plaintext, timestamp: timestamp, instanceName: instanceName, key: key, identity: signer,
                                      pairingName: pairingName)
    }

    @Test("a paired device opens the record and reads the content and timestamp")
    func roundTrip() throws {
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.record())
        #expect(parsed.version == 3)
        #expect(parsed.pairingName == nil)
        let others = SealedAdvertisement.Sender(deviceID: Self.other, advertisingKey: .random(), publicKey: Self.otherIdentity.publicKey)
        let opened = try #require(Self.open(parsed, senders: [others, Self.sender]))
        #expect(opened == SealedAdvertisement.Opened(deviceID: Self.device, timestamp: 1_746_100_800, plaintext: Self.plaintext))
    }

    @Test("empty and maximal content round-trip", arguments: [0, 1, 100, SealedAdvertisement.maximumPlaintextBytes])
    func sizes(_ size: Int) throws {
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.record(plaintext))
        #expect(Self.open(parsed)?.plaintext == plaintext)
    }

    @Test("the record holds v=2, then s0, s1, … of at most 255 bytes, and nothing readable")
    func layout() throws {
        let strings = try #require(Self.strings(Self.record(Array(repeating: 65, count: 600))))
        #expect(strings.first == "v=3")
        #expect(strings.dropFirst().enumerated().allSatisfy { $0.element.hasPrefix("s\($0.offset)=") })
        #expect(strings.count == 5)
        #expect(strings.allSatisfy { $0.utf8.count <= 255 })
        #expect(!strings.joined().contains("AAAA"))
        // A fresh nonce each time: two records of the same content differ.
        #expect(Self.record() != Self.record())
    }

    @Test("a record with the largest content and pairing name stays within 1300 bytes")
    func maximalRecord() throws {
        for name in [String(repeating: "n", count: 1000), String(repeating: "😀", count: 100), String(repeating: "é", count: 200)] {
            let plaintext = Array(repeating: UInt8(0xFF), count: SealedAdvertisement.maximumPlaintextBytes)
            let record = Self.record(plaintext, pairingName: name)
            #expect(record.count <= 1300)
            #expect(record.count <= SealedAdvertisement.maximumRecordSize)
            let parsed = try SealedAdvertisement.parse(txtRecord: record)
            let pairingName = try #require(parsed.pairingName)
            #expect(name.hasPrefix(pairingName))
            #expect(pairingName.utf8.count <= 250 && pairingName.utf8.count > 240)
            #expect(Self.open(parsed)?.plaintext == plaintext)
        }
    }

    @Test("the pairing name is readable without a key")
    func pairingName() throws {
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.record(pairingName: "Kitchen laptop ü"))
        #expect(parsed.pairingName == "Kitchen laptop ü")
        #expect(Self.open(parsed, senders: []) == nil)
    }

    @Test("without the right key the record does not open")
    func wrongKey() throws {
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.record())
        let wrong = [SealedAdvertisement.Sender(deviceID: Self.device, advertisingKey: .random(), publicKey: Self.identity.publicKey),
                     SealedAdvertisement.Sender(deviceID: Self.other, advertisingKey: .random(), publicKey: Self.otherIdentity.publicKey)]
        #expect(SealedAdvertisement.open(parsed, instanceName: Self.instance, senders: wrong) == .unreadable)
        #expect(SealedAdvertisement.open(parsed, instanceName: Self.instance, senders: []) == .unreadable)
    }

    @Test("changing any sealed byte makes the record not open")
    func tampered() throws {
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.record())
        for index in parsed.sealed.indices {
            var changed = parsed
            changed.sealed[index] ^= 0x01
            #expect(Self.open(changed) == nil)
        }
    }

    @Test("changing any byte of the record makes it fail to parse or to open, never trap")
    func tamperedRecord() throws {
        let record = Self.record(pairingName: "x")
        for index in record.indices {
            for flip: UInt8 in [0x01, 0x20, 0x80] {
                var changed = record
                changed[index] ^= flip
                guard let parsed = try? SealedAdvertisement.parse(txtRecord: changed) else { continue }
                let opened = Self.open(parsed)
                // Only the pairing name (or the case of a key) can change without breaking the seal.
                if let opened { #expect(opened.plaintext == Self.plaintext) }
            }
        }
    }

    @Test("every truncation of a valid record is refused or does not open")
    func truncations() throws {
        let record = Self.record(Array(repeating: 7, count: 500), pairingName: "laptop")
        var opened = 0
        for length in 0..<record.count {
            guard let parsed = try? SealedAdvertisement.parse(txtRecord: Array(record.prefix(length))) else { continue }
            if Self.open(parsed) != nil { opened += 1 }
        }
        // Cutting off only the pair string leaves a complete sealed record.
        #expect(opened == 1)
    }

    @Test("random and mutated records never trap")
    func fuzz() {
        var generator = SystemRandomNumberGenerator()
        let valid = Self.record(pairingName: "fuzz")
        for round in 0..<3000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...400, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: bytes[Int.random(in: bytes.indices, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                    case 1: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
                    default: if !bytes.isEmpty { bytes.remove(at: Int.random(in: bytes.indices, using: &generator)) }
                    }
                    if bytes.isEmpty { break }
                }
            }
            if let parsed = try? SealedAdvertisement.parse(txtRecord: bytes) {
                _ = Self.open(parsed)
            }
        }
    }

    // MARK: Strict parsing

    static let sealed64 = String(repeating: "QUJD", count: 36)  // 108 bytes of base64

    @Test("keys are case-insensitive and the first occurrence wins")
    func keys() throws {
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.txt(["V=3", "v=3", "S0=" + Self.sealed64, "s0=AAAA", "PAIR=desk", "pair=other", "junk", "=x", "other=1"]))
        #expect(parsed == SealedAdvertisement.Public(version: 3, sealed: Array(repeating: Array("ABC".utf8), count: 36).flatMap { $0 }, pairingName: "desk"))
    }

    @Test("content split over several strings is joined in order")
    func split() throws {
        let parsed = try SealedAdvertisement.parse(txtRecord: Self.txt(["v=3", "s1=" + Self.sealed64, "s0=" + Self.sealed64]))
        #expect(parsed.sealed.count == 216)
    }

    static let malformed: [(String, [String])] = [
        ("no version", ["s0=" + sealed64]),
        ("version not a number", ["v=two", "s0=" + sealed64]),
        ("version with a sign", ["v=+2", "s0=" + sealed64]),
        ("empty version", ["v=", "s0=" + sealed64]),
        ("other version", ["v=2", "s0=" + sealed64]),
        ("no content", ["v=3"]),
        ("gap", ["v=3", "s0=" + sealed64, "s2=" + sealed64]),
        ("no s0", ["v=3", "s1=" + sealed64]),
        ("s16", ["v=3", "s0=" + sealed64, "s16=AAAA"]),
        ("s99999999999999999999", ["v=3", "s0=" + sealed64, "s99999999999999999999=AAAA"]),
        ("leading zero", ["v=3", "s0=" + sealed64, "s01=AAAA"]),
        ("not base64", ["v=3", "s0=" + sealed64.dropLast(4) + "QU*D"]),
        ("base64 with a line break", ["v=3", "s0=" + sealed64.prefix(32) + "\n" + sealed64.dropFirst(32)]),
        ("base64 not a multiple of 4", ["v=3", "s0=" + sealed64 + "QU"]),
        ("padding in the middle", ["v=3", "s0=QQ==" + sealed64]),
        ("non-zero bits before padding", ["v=3", "s0=" + sealed64 + "QR=="]),
        ("too short", ["v=3", "s0=" + String(repeating: "QUJD", count: 33)]),
        ("too long", ["v=3"] + (0..<8).map { "s\($0)=" + String(repeating: "QUJD", count: 60) }),
    ]

    @Test("malformed records are refused with a reason", arguments: malformed)
    func refused(_ name: String, _ strings: [String]) {
        let error = #expect(throws: SealedAdvertisementError.self, "\(name)") {
            try SealedAdvertisement.parse(txtRecord: Self.txt(strings))
        }
        #expect(error?.description.isEmpty == false)
    }

    @Test("the errors say what is wrong")
    func messages() {
        #expect(throws: SealedAdvertisementError.notSealed) { try SealedAdvertisement.parse(txtRecord: []) }
        #expect(throws: SealedAdvertisementError.unsupportedVersion(2)) { try SealedAdvertisement.parse(txtRecord: Self.txt(["v=2"])) }
        #expect(throws: SealedAdvertisementError.malformed("s2 is present but s1 is missing")) {
            try SealedAdvertisement.parse(txtRecord: Self.txt(["v=3", "s0=" + Self.sealed64, "s2=" + Self.sealed64]))
        }
        #expect(throws: SealedAdvertisementError.malformed("a TXT string runs past the end of the record")) {
            try SealedAdvertisement.parse(txtRecord: [10, UInt8(ascii: "v")])
        }
        #expect(SealedAdvertisementError.unsupportedVersion(2).description.contains("version 2"))
    }

    @Test("a pairing name that is not UTF-8 is refused")
    func pairNotUTF8() {
        let record = Self.txt(["v=3", "s0=" + Self.sealed64]) + [7] + Array("pair=".utf8) + [0xFF, 0xFE]
        #expect(throws: SealedAdvertisementError.self) { try SealedAdvertisement.parse(txtRecord: record) }
    }
}
