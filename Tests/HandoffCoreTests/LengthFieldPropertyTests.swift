import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Property tests for every length field in the protocol (docs/PROTOCOL.md): the frame header's
/// payload length, the binary property list's string/data/URL/key lengths and array/dictionary
/// counts, and the TXT record's string length bytes. A declared size that the limits or the bytes
/// at hand cannot cover must be refused with an error, at that field, before anything of that size
/// is allocated: a 9-byte input declaring a 4 GiB string returns an error at once. (A decoder that
/// allocated the declared size would take seconds or trap on these inputs; the timing checks are
/// generous so they hold on a loaded machine.) Deterministic: every generator is seeded.
@Suite("Length fields: declared sizes are refused before anything is allocated")
struct LengthFieldPropertyTests {
    // MARK: - Frame header length

    static let peerLimits = FrameLimits()
    static let controlLimits = ControlProtocol.limits
    static let knownKinds: [UInt8] = FrameKind.known.map(\.rawValue).sorted()

    static func limit(for kind: FrameKind, in limits: FrameLimits) -> Int {
        kind == .userInfo ? limits.maxUserInfoBytes : limits.maxFrameBytes
    }

    static func header(_ kind: UInt8, _ length: UInt32) -> [UInt8] { [kind] + LFEncoder.be32(length) }

    /// The error a header over the limit must raise.
    static func tooLarge(_ kind: FrameKind, _ declared: Int, _ limits: FrameLimits) -> FrameError {
        kind == .userInfo
            ? .userInfoTooLarge(declared: declared, limit: limits.maxUserInfoBytes)
            : .frameTooLarge(kind: kind, declared: declared, limit: limits.maxFrameBytes)
    }

    @Test("frame length 0, the limit, limit+1, 0x7FFFFFFF, 0x80000000 and 0xFFFFFFFF, for every kind and both limit sets",
          arguments: knownKinds, [false, true])
    func frameLengthBoundaries(kindByte: UInt8, control: Bool) throws {
        let kind = FrameKind(rawValue: kindByte)
        let limits = control ? Self.controlLimits : Self.peerLimits
        let limit = Self.limit(for: kind, in: limits)
        let lengths: [UInt32] = Array(Set([0, UInt32(limit), UInt32(limit + 1), 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF])).sorted()
        for length in lengths {
            let bytes = Self.header(kindByte, length)
            // Read as unsigned: "negative" 32-bit values are large lengths, never negative ones.
            let header = FrameHeader(bytes: bytes)
            #expect(header.kind == kind)
            #expect(header.length == Int(length) && header.length >= 0)

            var parser = FrameParser(limits: limits)
            parser.append(bytes)
            if Int(length) > limit {
                #expect(throws: Self.tooLarge(kind, Int(length), limits), "\(kind) length \(length)") { try parser.next() }
                #expect(parser.bufferedByteCount == Frame.headerSize, "nothing but the header was buffered")
                continue
            }
            if length == 0 {
                #expect(try parser.next() == Frame(kind: kind, payload: []))
                #expect(parser.bufferedByteCount == 0)
                continue
            }
            // Within the limit: the parser waits for the payload.
            #expect(try parser.next() == nil, "\(kind) length \(length) waits for its payload")
            #expect(parser.bufferedByteCount == Frame.headerSize)
            if length <= 1 << 17 {
                let payload = (0..<Int(length)).map { UInt8(truncatingIfNeeded: $0) }
                parser.append(payload.dropLast())
                #expect(try parser.next() == nil, "one byte short")
                parser.append(payload.suffix(1))
                #expect(try parser.next() == Frame(kind: kind, payload: payload))
                #expect(parser.bufferedByteCount == 0)
            }
        }
    }

    @Test("a refused frame header is refused as its fifth byte arrives, before any payload", arguments: knownKinds)
    func frameHeaderByteByByte(kindByte: UInt8) throws {
        let kind = FrameKind(rawValue: kindByte)
        for length: UInt32 in [UInt32(Self.limit(for: kind, in: Self.peerLimits) + 1), 0x8000_0000, 0xFFFF_FFFF] {
            var parser = FrameParser(limits: Self.peerLimits)
            let bytes = Self.header(kindByte, length)
            for byte in bytes.dropLast() {
                parser.append([byte])
                #expect(try parser.next() == nil)
            }
            parser.append(bytes.suffix(1))
            #expect(throws: Self.tooLarge(kind, Int(length), Self.peerLimits)) { try parser.next() }
        }
    }

    @Test("random frame lengths are accepted exactly when within the kind's limit (seeded)", arguments: [1, 2, 3] as [UInt64])
    func randomFrameLengths(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<5_000 {
            let control = Bool.random(using: &rng)
            let limits = control ? Self.controlLimits : Self.peerLimits
            // Mostly known kinds; sometimes any byte.
            let kindByte = Int.random(in: 0..<4, using: &rng) == 0
                ? UInt8.random(in: 0...255, using: &rng)
                : Self.knownKinds[Int.random(in: 0..<Self.knownKinds.count, using: &rng)]
            let kind = FrameKind(rawValue: kindByte)
            let limit = Self.limit(for: kind, in: limits)
            let length: UInt32 = switch Int.random(in: 0..<3, using: &rng) {
            case 0: UInt32(clamping: limit + Int.random(in: -3...3, using: &rng))
            case 1: UInt32.random(in: 0x7FFF_FFF0...0x8000_000F, using: &rng)
            default: UInt32.random(in: 0...UInt32.max, using: &rng)
            }
            var parser = FrameParser(limits: limits)
            parser.append(Self.header(kindByte, length))
            if !FrameKind.known.contains(kind) {
                #expect(throws: FrameError.unknownKind(kindByte)) { try parser.next() }
            } else if Int(length) > limit {
                #expect(throws: Self.tooLarge(kind, Int(length), limits)) { try parser.next() }
            } else {
                #expect(try parser.next() == (length == 0 ? Frame(kind: kind, payload: []) : nil))
            }
        }
    }

    // MARK: - Property-list lengths and counts

    /// Expects decoding to fail with exactly this offset and reason.
    static func expectDecodingError(_ bytes: [UInt8], offset: Int, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: PropertyListDecodingError.self, sourceLocation: sourceLocation) {
            try PropertyListBinaryCoding.decode(bytes)
        }
        #expect(error?.offset == offset, sourceLocation: sourceLocation)
        #expect(error?.reason == reason, sourceLocation: sourceLocation)
    }

    @Test("a 9-byte input declaring a 4 GiB string, data or URL is refused at once", arguments: [0x05, 0x06, 0x08] as [UInt8])
    func fourGiBRun(tag: UInt8) {
        for declared: UInt32 in [0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, 5] {
            let input = [tag] + LFEncoder.be32(declared) + Array("ABCD".utf8)
            #expect(input.count == 9)
            let elapsed = ContinuousClock().measure {
                for _ in 0..<1_000 {
                    Self.expectDecodingError(input, offset: 5, reason: "length \(declared) exceeds the 4 bytes left")
                }
            }
            #expect(elapsed < .seconds(5), "1,000 refusals took \(elapsed)")
        }
    }

    @Test("a 9-byte input declaring 4 billion array elements or dictionary members is refused at once",
          arguments: [(0x0A, 1), (0x0B, 5)] as [(UInt8, Int)])
    func fourBillionCount(tag: UInt8, minimumElementSize: Int) {
        for declared: UInt32 in [0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF, UInt32(4 / minimumElementSize + 1)] {
            let input = [tag] + LFEncoder.be32(declared) + [0x00, 0x00, 0x00, 0x00]
            let elapsed = ContinuousClock().measure {
                for _ in 0..<1_000 {
                    Self.expectDecodingError(input, offset: 5, reason: "count \(declared) cannot fit in the 4 bytes left")
                }
            }
            #expect(elapsed < .seconds(5), "1,000 refusals took \(elapsed)")
        }
    }

    @Test("every length and count field set past what remains is refused at that field (seeded)", arguments: [11, 12, 13, 14, 15] as [UInt64])
    func everyFieldOversized(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var checkedRuns = 0
        var checkedCounts = 0
        for _ in 0..<40 {
            let value = PropertyListValue.dictionary(LFGenerator.dictionary(depth: 0, using: &rng))
            var encoder = LFEncoder()
            encoder.encode(value)
            let bytes = encoder.bytes
            try #require(bytes == PropertyListBinaryCoding.encode(value), "the test's field map follows the real encoding")
            for field in encoder.fields {
                let remaining = bytes.count - field.offset - 4
                let bound = switch field.kind {
                case .run: remaining
                case .count(let minimumElementSize): remaining / minimumElementSize
                }
                var declaredValues: [UInt32] = [UInt32(bound + 1), 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]
                declaredValues.append(UInt32.random(in: UInt32(bound + 1)...UInt32.max, using: &rng))
                for declared in declaredValues {
                    var mutated = bytes
                    mutated.replaceSubrange(field.offset..<(field.offset + 4), with: LFEncoder.be32(declared))
                    let reason = switch field.kind {
                    case .run: "length \(declared) exceeds the \(remaining) bytes left"
                    case .count: "count \(declared) cannot fit in the \(remaining) bytes left"
                    }
                    Self.expectDecodingError(mutated, offset: field.offset + 4, reason: reason)
                }
                switch field.kind {
                case .run: checkedRuns += 1
                case .count: checkedCounts += 1
                }
            }
        }
        #expect(checkedRuns > 100 && checkedCounts > 40, "\(checkedRuns) lengths and \(checkedCounts) counts checked")
    }

    @Test("every prefix cut inside a length or count field is refused, at or before the cut (seeded)", arguments: [21, 22] as [UInt64])
    func everyFieldTruncated(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for _ in 0..<20 {
            let value = PropertyListValue.dictionary(LFGenerator.dictionary(depth: 0, using: &rng))
            var encoder = LFEncoder()
            encoder.encode(value)
            let bytes = encoder.bytes
            for field in encoder.fields {
                for cut in field.offset..<(field.offset + 4) {
                    let prefix = Array(bytes[0..<cut])
                    do {
                        _ = try PropertyListBinaryCoding.decode(prefix)
                        Issue.record("a prefix of \(cut) bytes cut inside the field at \(field.offset) decoded")
                    } catch {
                        // An enclosing count may already be refused (the bytes left no longer cover it).
                        #expect(error.offset <= cut)
                    }
                }
            }
        }
        // With no enclosing container the cut is reported at the field itself.
        for tag: UInt8 in [0x05, 0x06, 0x08, 0x0A, 0x0B] {
            for length in 0..<4 {
                let prefix = [tag] + Array(repeating: 0xFF, count: length)
                Self.expectDecodingError(prefix, offset: 1, reason: "truncated length")
            }
        }
    }

    @Test("every proper prefix of encodings with long strings and data is refused (seeded)")
    func longRunsTruncatedAtEveryPrefix() throws {
        var rng = SplitMix64(seed: 31)
        for _ in 0..<6 {
            // Lengths over 255 and 65535, so every byte of the length fields is non-zero somewhere.
            let long = String(repeating: "é", count: Int.random(in: 130...40_000, using: &rng))
            let value = PropertyListValue.dictionary([
                long: .data(Data(repeating: 0xAB, count: Int.random(in: 256...70_000, using: &rng))),
                "s": .string(long), "u": .url(URL(string: "https://example.com/" + String(repeating: "p", count: 300))!),
                "a": .array([.string(long), .dictionary([long: .null])]),
            ])
            let bytes = PropertyListBinaryCoding.encode(value)
            // Every prefix around each field boundary, and a seeded sample of the rest.
            var encoder = LFEncoder()
            encoder.encode(value)
            var cuts = Set(encoder.fields.flatMap { ($0.offset - 2)...($0.offset + 6) }.filter { $0 >= 0 && $0 < bytes.count })
            for _ in 0..<300 { cuts.insert(Int.random(in: 0..<bytes.count, using: &rng)) }
            for cut in cuts.sorted() {
                #expect(throws: PropertyListDecodingError.self, "prefix of \(cut) of \(bytes.count) bytes") {
                    try PropertyListBinaryCoding.decode(bytes[0..<cut])
                }
            }
        }
    }

    @Test("a count within the byte bound but larger than the elements present is refused (seeded)")
    func countsLargerThanContents() throws {
        var rng = SplitMix64(seed: 41)
        for _ in 0..<500 {
            let elements = (0..<Int.random(in: 0...5, using: &rng)).map { _ in PropertyListValue.string(String(repeating: "x", count: Int.random(in: 0...9, using: &rng))) }
            let asArray = Bool.random(using: &rng)
            let value: PropertyListValue = asArray
                ? .array(elements)
                : .dictionary(Dictionary(uniqueKeysWithValues: elements.enumerated().map { ("k\($0.offset)", $0.element) }))
            var bytes = PropertyListBinaryCoding.encode(value)
            let count = elements.count
            let extra = Int.random(in: 1...3, using: &rng)
            bytes.replaceSubrange(1..<5, with: LFEncoder.be32(UInt32(count + extra)))
            // Only the bytes at hand bound the count; the missing elements make it fail later.
            #expect(throws: PropertyListDecodingError.self, "\(asArray ? "array" : "dictionary") of \(count) declaring \(count + extra)") {
                try PropertyListBinaryCoding.decode(bytes)
            }
        }
    }

    // MARK: - TXT string length bytes

    static func advertisement(using rng: inout SplitMix64) -> ActivityAdvertisement {
        let hex = "0123456789abcdef"
        let agentID = String((0..<32).map { _ in hex.randomElement(using: &rng)! })
        var current: ActivityAdvertisement.Current?
        if Bool.random(using: &rng) {
            let title: String? = Bool.random(using: &rng)
                ? String(repeating: ["a", "é", "🌍", "e\u{301}"].randomElement(using: &rng)!, count: Int.random(in: 0...300, using: &rng))
                : nil
            current = .init(id: LFGenerator.uuid(using: &rng), activityType: ActivityType(rawValue: "com.example.app\(Int.random(in: 0...999, using: &rng)).edit")!, title: title)
        }
        return ActivityAdvertisement(agentID: agentID, sequence: UInt64.random(in: 0...UInt64.max, using: &rng), current: current)
    }

    /// The offsets of the length bytes of a well-formed TXT record.
    static func lengthByteOffsets(_ record: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var i = 0
        while i < record.count {
            offsets.append(i)
            i += 1 + Int(record[i])
        }
        #expect(i == record.count, "the record is well formed")
        return offsets
    }

    static let runsPastTheEnd = AdvertisementError.malformed("TXT string runs past the end of the record")

    @Test("a TXT length byte running past the end of the record is refused (seeded)")
    func txtLengthPastTheEnd() throws {
        var rng = SplitMix64(seed: 51)
        var checked = 0
        for _ in 0..<300 {
            let record = Self.advertisement(using: &rng).txtRecord
            #expect(record.count <= ActivityAdvertisement.maximumRecordSize)
            for offset in Self.lengthByteOffsets(record) {
                let remaining = record.count - offset - 1
                guard remaining < 255 else { continue }
                for declared in Set([remaining + 1, 255, Int.random(in: (remaining + 1)...255, using: &rng)]) {
                    var mutated = record
                    mutated[offset] = UInt8(declared)
                    #expect(throws: Self.runsPastTheEnd, "length byte at \(offset) declaring \(declared) with \(remaining) left") {
                        try ActivityAdvertisement(txtRecord: mutated)
                    }
                    checked += 1
                }
            }
        }
        #expect(checked > 300)
        // The smallest cases: a lone length byte, and one that claims the whole record and one more.
        #expect(throws: Self.runsPastTheEnd) { try ActivityAdvertisement(txtRecord: [0x01]) }
        #expect(throws: Self.runsPastTheEnd) { try ActivityAdvertisement(txtRecord: [0xFF]) }
        #expect(throws: Self.runsPastTheEnd) { try ActivityAdvertisement(txtRecord: [0x03] + Array("v=2".utf8) + [0x04] + Array("id=".utf8)) }
    }

    @Test("every prefix of a TXT record: cut inside a string is refused as running past the end, cut between strings is not (seeded)")
    func txtTruncatedAtEveryPrefix() throws {
        var rng = SplitMix64(seed: 61)
        for _ in 0..<60 {
            let record = Self.advertisement(using: &rng).txtRecord
            let boundaries = Set(Self.lengthByteOffsets(record) + [record.count])
            for cut in 0...record.count {
                let prefix = Array(record[0..<cut])
                if boundaries.contains(cut) {
                    // Whole strings: parsed, or refused for what is missing, never as running past the end.
                    do { _ = try ActivityAdvertisement(txtRecord: prefix) } catch {
                        #expect(error != Self.runsPastTheEnd, "prefix of \(cut) bytes ends between strings")
                    }
                } else {
                    #expect(throws: Self.runsPastTheEnd, "prefix of \(cut) bytes ends inside a string") {
                        try ActivityAdvertisement(txtRecord: prefix)
                    }
                }
            }
        }
    }
}

// MARK: - Helpers

/// An encoder that follows docs/PROTOCOL.md's binary property-list encoding and records where each
/// length and count field is, so tests can corrupt exactly those fields.
struct LFEncoder {
    enum FieldKind {
        /// A string, data, URL or dictionary-key length: that many bytes follow.
        case run
        /// An array or dictionary count; each element takes at least this many bytes.
        case count(minimumElementSize: Int)
    }

    struct Field {
        var offset: Int
        var kind: FieldKind
    }

    var bytes: [UInt8] = []
    var fields: [Field] = []

    static func be32(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    static func be64(_ v: UInt64) -> [UInt8] { stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: v >> UInt64($0)) } }

    mutating func run(_ run: [UInt8]) {
        fields.append(Field(offset: bytes.count, kind: .run))
        bytes += Self.be32(UInt32(run.count)) + run
    }

    mutating func count(_ n: Int, minimumElementSize: Int) {
        fields.append(Field(offset: bytes.count, kind: .count(minimumElementSize: minimumElementSize)))
        bytes += Self.be32(UInt32(n))
    }

    mutating func encode(_ value: PropertyListValue) {
        switch value {
        case .null: bytes.append(0x00)
        case .bool(let b): bytes.append(b ? 0x02 : 0x01)
        case .integer(let i): bytes += [0x03] + Self.be64(UInt64(bitPattern: i))
        case .double(let d): bytes += [0x04] + Self.be64(d.bitPattern)
        case .date(let d): bytes += [0x07] + Self.be64(d.timeIntervalSinceReferenceDate.bitPattern)
        case .string(let s): bytes.append(0x05); run(Array(s.utf8))
        case .data(let d): bytes.append(0x06); run(Array(d))
        case .url(let u): bytes.append(0x08); run(Array(u.absoluteString.utf8))
        case .uuid(let u): bytes.append(0x09); withUnsafeBytes(of: u.uuid) { bytes += $0 }
        case .array(let elements):
            bytes.append(0x0A)
            count(elements.count, minimumElementSize: 1)
            for element in elements { encode(element) }
        case .dictionary(let members):
            bytes.append(0x0B)
            count(members.count, minimumElementSize: 5)
            for key in members.keys.sorted() {
                run(Array(key.utf8))
                encode(members[key]!)
            }
        }
    }
}

/// Seeded random property-list values with many length fields: strings, data, URLs, keys and
/// nested containers.
enum LFGenerator {
    static let urls = ["https://example.com/", "https://notes.example.com/n/42?tab=edit#s2", "mailto:a@example.com", "urn:isbn:0451450523"]
    static let alphabet: [String] = ["a", "Z", "0", " ", "é", "世", "🌍", "\u{301}", "\n", "\u{0}"]

    static func uuid(using rng: inout SplitMix64) -> UUID {
        let a = rng.next(), b = rng.next()
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }

    static func string(using rng: inout SplitMix64) -> String {
        let n = Int.random(in: 0...(Bool.random(using: &rng) ? 8 : 300), using: &rng)
        return (0..<n).map { _ in alphabet.randomElement(using: &rng)! }.joined()
    }

    static func value(depth: Int, using rng: inout SplitMix64) -> PropertyListValue {
        switch Int.random(in: 0..<(depth < 3 ? 11 : 9), using: &rng) {
        case 0: return .string(string(using: &rng))
        case 1: return .data(Data((0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case 2: return .url(URL(string: urls.randomElement(using: &rng)!)!)
        case 3: return .integer(Int64.random(in: .min ... .max, using: &rng))
        case 4: return .double(Double(bitPattern: rng.next()))
        case 5: return .date(Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e9, using: &rng)))
        case 6: return .uuid(uuid(using: &rng))
        case 7: return .bool(Bool.random(using: &rng))
        case 8: return .null
        case 9: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in value(depth: depth + 1, using: &rng) })
        default: return .dictionary(dictionary(depth: depth + 1, using: &rng))
        }
    }

    static func dictionary(depth: Int, using rng: inout SplitMix64) -> [String: PropertyListValue] {
        var members: [String: PropertyListValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &rng) {
            members[string(using: &rng)] = value(depth: depth, using: &rng)
        }
        return members
    }
}
