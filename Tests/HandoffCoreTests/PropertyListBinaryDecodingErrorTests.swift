import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Property-list binary coding: refused input")
struct PropertyListBinaryDecodingErrorTests {
    /// Decodes and returns the error, recording an issue if decoding succeeded.
    static func decodingError(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> PropertyListDecodingError? {
        #expect(throws: PropertyListDecodingError.self, sourceLocation: sourceLocation) {
            try PropertyListBinaryCoding.decode(bytes)
        }
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func string(_ s: String) -> [UInt8] { be32(UInt32(s.utf8.count)) + Array(s.utf8) }

    @Test("every proper prefix of a valid encoding is refused, never a crash")
    func truncatedAtEveryLength() {
        let bytes = PropertyListBinaryCoding.encode(Fixtures.everyTypeUserInfo)
        #expect(bytes.count > 300)
        for length in 0..<bytes.count {
            let prefix = Array(bytes[0..<length])
            #expect(throws: PropertyListDecodingError.self, "prefix of \(length) bytes") {
                try PropertyListBinaryCoding.decode(prefix)
            }
        }
    }

    @Test("every proper prefix of random dictionaries' encodings is refused (seeded)")
    func truncatedRandomValues() {
        var generator = RandomPropertyList(seed: 77)
        for _ in 0..<200 {
            let value = PropertyListValue.dictionary(generator.dictionary())
            let bytes = PropertyListBinaryCoding.encode(value)
            for length in 0..<bytes.count {
                #expect(throws: PropertyListDecodingError.self) { try PropertyListBinaryCoding.decode(bytes[0..<length]) }
            }
        }
    }

    @Test("random bytes are decoded or refused, never a crash (seeded)")
    func randomBytes() {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0..<40, using: &rng)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Bias the first byte towards real tags so the decoder gets past the first check.
            if !bytes.isEmpty { bytes[0] = UInt8.random(in: 0...0x0C, using: &rng) }
            _ = try? PropertyListBinaryCoding.decode(bytes)
        }
    }

    @Test("an unknown type tag is refused with its offset", arguments: [0x0C, 0x10, 0x7F, 0xFF] as [UInt8])
    func unknownTag(_ tag: UInt8) {
        let error = Self.decodingError([tag])
        #expect(error?.offset == 0)
        #expect(error?.reason == "unknown type tag \(tag)")
        let nested = Self.decodingError([0x0A] + Self.be32(2) + [0x00, tag])
        #expect(nested?.offset == 6)
    }

    @Test("a length larger than the bytes that remain is refused before allocating", arguments: [0x05, 0x06, 0x08] as [UInt8])
    func lengthPastTheEnd(_ tag: UInt8) {
        let error = Self.decodingError([tag, 0xFF, 0xFF, 0xFF, 0xFF, 0x41])
        #expect(error?.offset == 5)
        #expect(error?.reason == "length 4294967295 exceeds the 1 bytes left")
    }

    @Test("an array count that cannot fit in the remaining bytes is refused")
    func arrayCountTooLarge() {
        let error = Self.decodingError([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00])
        #expect(error?.offset == 5)
        #expect(error?.reason == "count 4294967295 cannot fit in the 1 bytes left")
        // Two elements announced, one byte left: each element needs at least one byte.
        #expect(Self.decodingError([0x0A] + Self.be32(2) + [0x00]) != nil)
    }

    @Test("a dictionary count that cannot fit is refused (each member needs at least 5 bytes)")
    func dictionaryCountTooLarge() {
        let error = Self.decodingError([0x0B] + Self.be32(1) + [0, 0, 0, 0])
        #expect(error?.reason == "count 1 cannot fit in the 4 bytes left")
        let huge = Self.decodingError([0x0B, 0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 100))
        #expect(huge?.reason.hasPrefix("count 4294967295 cannot fit") == true)
        // One member with an empty key and a null value is exactly 5 bytes: accepted.
        #expect(throws: Never.self) { try PropertyListBinaryCoding.decode([0x0B] + Self.be32(1) + Self.be32(0) + [0x00]) }
    }

    @Test("a duplicate dictionary key is refused at the second key")
    func duplicateKey() {
        let bytes: [UInt8] = [0x0B] + Self.be32(2) + Self.string("a") + [0x00] + Self.string("a") + [0x01]
        let error = Self.decodingError(bytes)
        #expect(error?.offset == 11)
        #expect(error?.reason == #"duplicate key "a""#)
    }

    @Test("invalid UTF-8 in a string, a key or a URL is refused", arguments: [
        [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE4, 0xB8], [0xF4, 0x90, 0x80, 0x80], [0x80],
    ] as [[UInt8]])
    func invalidUTF8(_ bad: [UInt8]) {
        let inString = Self.decodingError([0x05] + Self.be32(UInt32(bad.count)) + bad)
        #expect(inString?.offset == 1)
        #expect(inString?.reason == "string is not valid UTF-8")
        let inKey = Self.decodingError([0x0B] + Self.be32(1) + Self.be32(UInt32(bad.count)) + bad + [0x00])
        #expect(inKey?.offset == 5)
        #expect(inKey?.reason == "string is not valid UTF-8")
        let inURL = Self.decodingError([0x08] + Self.be32(UInt32(bad.count)) + bad)
        #expect(inURL?.reason == "string is not valid UTF-8")
    }

    @Test("an empty URL is refused")
    func invalidURL() {
        let error = Self.decodingError([0x08] + Self.be32(0))
        #expect(error?.offset == 1)
        #expect(error?.reason == "invalid URL")
    }

    @Test("truncated fixed-size bodies are refused", arguments: [
        [0x03, 0, 0, 0, 0, 0, 0, 0], [0x04, 0, 0], [0x07], [0x09] + [UInt8](repeating: 0, count: 15), [0x05, 0, 0, 0],
    ] as [[UInt8]])
    func truncatedBodies(_ bytes: [UInt8]) {
        #expect(Self.decodingError(bytes) != nil)
    }

    @Test("nesting deeper than maximumDepth is refused without exhausting the stack")
    func tooDeep() {
        let depth = PropertyListBinaryCoding.maximumDepth + 2
        let level: [UInt8] = [0x0A] + Self.be32(1)
        let bytes: [UInt8] = Array(Array(repeating: level, count: depth).joined()) + [0x00]
        let error = Self.decodingError(bytes)
        #expect(error?.reason == "nested deeper than \(PropertyListBinaryCoding.maximumDepth)")

        let veryDeep: [UInt8] = Array(Array(repeating: level, count: 100_000).joined()) + [0x00]
        #expect(Self.decodingError(veryDeep) != nil)
    }

    @Test("trailing bytes after the value are refused")
    func trailingBytes() {
        let error = Self.decodingError(PropertyListBinaryCoding.encode(.integer(5)) + [0x00, 0x00])
        #expect(error?.offset == 9)
        #expect(error?.reason == "2 trailing bytes")
        #expect(error?.description == "invalid userInfo encoding at byte 9: 2 trailing bytes")
    }

    @Test("empty input is refused")
    func emptyInput() {
        let error = Self.decodingError([])
        #expect(error?.offset == 0)
        #expect(error?.reason == "truncated")
    }

    @Test("decodeUserInfo refuses a value that is not a dictionary")
    func userInfoMustBeADictionary() {
        let error = #expect(throws: PropertyListDecodingError.self) {
            try PropertyListBinaryCoding.decodeUserInfo(PropertyListBinaryCoding.encode(.array([])))
        }
        #expect(error?.reason == "userInfo must be a dictionary")
    }
}
