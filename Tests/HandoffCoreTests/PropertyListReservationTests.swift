import Testing

@testable import HandoffCore

/// The security review's suspicion (B), nested reservations: a container's element count is
/// checked only against the bytes left, so 63 nested containers in one 64 KiB frame could each
/// reserve room for about 64 Ki elements (about 100 MB between them) before the frame is found
/// to be short. Each container now reserves at most `maximumReservation` elements ahead of its
/// contents; these tests add up the capacity the containers were really given.
@Suite("Property-list binary coding: what a frame can make the decoder reserve")
struct PropertyListReservationTests {
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// `depth` nested arrays, each claiming as many elements as there are bytes left after its
    /// header (the most the count check lets through), in a frame of `size` bytes padded with
    /// nulls: the decoding fails when the outer arrays find their remaining elements missing.
    static func nestedArrays(depth: Int, size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for level in 0..<depth {
            let headerEnd = (level + 1) * 5
            bytes += [0x0A] + be32(size - headerEnd)
        }
        return bytes + [UInt8](repeating: 0x00, count: size - bytes.count)
    }

    /// The same with dictionaries: each claims as many members as fit in the bytes left (5 bytes
    /// a member at least), its first member's value the next dictionary.
    static func nestedDictionaries(depth: Int, size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for level in 0..<depth {
            let headerEnd = (level + 1) * 10
            bytes += [0x0B] + be32((size - headerEnd) / 5) + be32(0)  // a member with the empty key
        }
        return bytes + [UInt8](repeating: 0x00, count: size - bytes.count)
    }

    static func reserved(decoding bytes: [UInt8]) -> Int {
        var reader = PropertyListBinaryCoding.Reader(bytes: bytes)
        #expect(throws: PropertyListDecodingError.self) { _ = try reader.readValue(depth: 0) }
        return reader.reservedElements
    }

    @Test("63 nested arrays in a 64 KiB frame reserve room for at most 64 elements each")
    func nestedArraysReserveLittle() {
        let reserved = Self.reserved(decoding: Self.nestedArrays(depth: 63, size: 65_536))
        // Without the bound: about 63 × 65 Ki elements (24 bytes each: ~100 MB).
        #expect(reserved > 0)
        #expect(reserved <= 63 * 2 * PropertyListBinaryCoding.Reader.maximumReservation, "reserved \(reserved) elements")
    }

    @Test("63 nested dictionaries in a 64 KiB frame reserve room for at most 64 members each")
    func nestedDictionariesReserveLittle() {
        let reserved = Self.reserved(decoding: Self.nestedDictionaries(depth: 63, size: 65_536))
        #expect(reserved > 0)
        // A dictionary's capacity is rounded up to its hash table's size.
        #expect(reserved <= 63 * 2 * PropertyListBinaryCoding.Reader.maximumReservation, "reserved \(reserved) members")
    }

    @Test("in a 4 KiB frame (what an unpaired host may send) as well")
    func beforePairingFrame() {
        let reserved = Self.reserved(decoding: Self.nestedArrays(depth: 63, size: 4_096))
        #expect(reserved <= 63 * 2 * PropertyListBinaryCoding.Reader.maximumReservation)
    }

    @Test("a large container still decodes whole: its elements grow it as they arrive")
    func largeContainerDecodes() throws {
        let value = PropertyListValue.array((0..<10_000).map { .integer(Int64($0)) })
        #expect(try PropertyListBinaryCoding.decode(PropertyListBinaryCoding.encode(value)) == value)
    }
}
