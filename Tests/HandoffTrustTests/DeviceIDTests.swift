import HandoffTrust
import Testing

@Suite("Device ID: Syncthing-style readable form")
struct DeviceIDTests {
    /// A device ID from Syncthing's own tests and documentation (`lib/protocol/deviceid_test.go`).
    static let syncthingID = "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2"
    /// The same ID without its check characters (the 52 base32 characters).
    static let syncthingID52 = "P56IOI7MZJNU2IQGDREYDM2MGTMGL3BXNPQ6W5BTBBZ4TJXZWICQ"

    static func randomID() throws -> DeviceID {
        try DeviceID(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) })
    }

    @Test("Syncthing's device ID parses, check characters and all, and prints the same")
    func syncthingVector() throws {
        let id = try DeviceID(parsing: Self.syncthingID)
        #expect(id.description == Self.syncthingID)
        #expect(id.shortID == "P56IOI7")
        #expect(try DeviceID(parsing: Self.syncthingID52) == id)
    }

    @Test("forms a person may type all parse to the same ID", arguments: [
        "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2",
        "p56ioi7-mzjnu2y-iqgdrey-dm2mgti-mgl3bxn-pq6w5bm-tbbz4tj-xzwicq2",
        "P56IOI7MZJNU2YIQGDREYDM2MGTIMGL3BXNPQ6W5BMTBBZ4TJXZWICQ2",
        "P56IOI7 MZJNU2Y IQGDREY DM2MGTI MGL3BXN PQ6W5BM TBBZ4TJ XZWICQ2",
        "  P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-\nMGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2 ",
        "P561017-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2",  // 1 for I, 0 for O
        "p561017mzjnu2yiqgdreydm2mgtimgl3bxnpq6w5bmtbbz4tjxzwicq2",
        "P56IOI7MZJNU2IQGDREYDM2MGTMGL3BXNPQ6W5BTBBZ4TJXZWICQ",
        "p56ioi7mzjnu2iqgdreydm2mgtmgl3bxnpq6w5btbbz4tjxzwicq",
    ])
    func typedForms(_ text: String) throws {
        #expect(try DeviceID(parsing: text).description == Self.syncthingID)
    }

    @Test("8 is read as B")
    func eightIsB() throws {
        let id = try DeviceID(parsing: Self.syncthingID)
        let typed = Self.syncthingID.replacingOccurrences("B", with: "8")
        #expect(try DeviceID(parsing: typed) == id)
    }

    @Test("random IDs round-trip through their readable form")
    func roundTrip() throws {
        for _ in 0..<200 {
            let id = try Self.randomID()
            let text = id.description
            #expect(text.count == 63)
            #expect(text.split(separator: "-").map(\.count) == Array(repeating: 7, count: 8))
            #expect(try DeviceID(parsing: text) == id)
            #expect(try DeviceID(parsing: text.lowercased().filter { $0 != "-" }) == id)
            #expect(id.shortID == String(text.prefix(7)))
        }
    }

    @Test("every single-character change is caught by the check characters")
    func singleCharacterChanges() throws {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        for id in [try DeviceID(parsing: Self.syncthingID), try Self.randomID(), try Self.randomID()] {
            let chars = Array(id.description)
            for position in chars.indices where chars[position] != "-" {
                for replacement in alphabet where replacement != chars[position] {
                    var changed = chars
                    changed[position] = replacement
                    #expect(throws: DeviceIDError.self, "\(String(changed)) was accepted") {
                        try DeviceID(parsing: String(changed))
                    }
                }
            }
        }
    }

    @Test("a wrong check character names its group")
    func wrongCheckCharacterMessage() throws {
        var chars = Array(Self.syncthingID)
        chars[chars.count - 1] = "3"  // the check character ending group 8
        let error = #expect(throws: DeviceIDError.self) { try DeviceID(parsing: String(chars)) }
        #expect(error == .wrongCheckCharacter(group: 8))
        #expect(error?.description.contains("check character of group 8 is wrong") == true)
        #expect(error?.description.contains("mistyped") == true)
    }

    @Test("a wrong length says how long a device ID is")
    func wrongLength() throws {
        let text = String(Self.syncthingID.filter { $0 != "-" }.prefix(50))
        let error = #expect(throws: DeviceIDError.self) { try DeviceID(parsing: text) }
        #expect(error?.description == "device ID \"\(text)\" has 50 characters; a device ID has 56 (8 groups of 7, as `handoff status` prints it)")
        #expect(throws: DeviceIDError.wrongLength(text: "", count: 0)) { try DeviceID(parsing: "") }
        let huge = String(repeating: "A", count: 100_000)
        let hugeError = #expect(throws: DeviceIDError.self) { try DeviceID(parsing: huge) }
        #expect(hugeError?.description.contains("has 100000 characters") == true)
    }

    @Test("a character that is not in a device ID is named with its position")
    func invalidCharacter() throws {
        let text = "P56IOI9-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2"
        #expect(throws: DeviceIDError.invalidCharacter("9", position: 7)) { try DeviceID(parsing: text) }
        #expect(throws: DeviceIDError.self) { try DeviceID(parsing: "P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQé") }
    }

    @Test("a 52-character ID whose last character has stray bits is refused")
    func strayBits() throws {
        let text = String(Self.syncthingID52.dropLast()) + "R"
        #expect(throws: DeviceIDError.strayBits) { try DeviceID(parsing: text) }
    }

    @Test("bytes must be 32")
    func byteCount() throws {
        #expect(throws: DeviceIDError.wrongByteCount(31)) { try DeviceID(bytes: Array(repeating: 0, count: 31)) }
        #expect(try DeviceID(bytes: Array(repeating: 7, count: 32)).bytes == Array(repeating: 7, count: 32))
    }

    @Test("the ID of a certificate is the SHA-256 of its DER")
    func certificateHash() throws {
        // SHA-256("abc") from FIPS 180-2.
        let expected: [UInt8] = [
            0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
            0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
        ]
        #expect(DeviceID(certificateDER: Array("abc".utf8)).bytes == expected)
    }

    @Test("IDs order by their bytes")
    func ordering() throws {
        let a = try DeviceID(bytes: [0] + Array(repeating: 9, count: 31))
        let b = try DeviceID(bytes: [1] + Array(repeating: 0, count: 31))
        #expect(a < b)
        #expect(!(b < a))
        #expect([b, a].sorted() == [a, b])
    }
}

extension String {
    func replacingOccurrences(_ target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
