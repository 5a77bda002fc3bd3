import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Property-list binary coding: round trips")
struct PropertyListBinaryRoundTripTests {
    static func roundTrip(_ value: PropertyListValue) throws -> PropertyListValue {
        try PropertyListBinaryCoding.decode(PropertyListBinaryCoding.encode(value))
    }

    static let awkwardValues: [PropertyListValue] = [
        .null, .bool(true), .bool(false),
        .integer(0), .integer(1), .integer(-1), .integer(.min), .integer(.max),
        .double(0), .double(-0.0), .double(.nan), .double(-.nan), .double(.signalingNaN), .double(Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)),
        .double(.infinity), .double(-.infinity), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(0.1),
        .string(""), .string("ascii"), .string("Grüße 世界 😀 👨‍👩‍👧‍👦 e\u{301}"), .string("\u{0}\u{1F}\u{7F}\u{FEFF}\u{10FFFF}"),
        .data(Data()), .data(Data([0])), .data(Data((0...255).map { UInt8($0) })),
        .date(Date(timeIntervalSinceReferenceDate: 0)),
        .date(Date(timeIntervalSinceReferenceDate: -978_307_200)),
        .date(Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_789)),
        .date(Date(timeIntervalSinceReferenceDate: 0.000_000_1)),
        .date(Date(timeIntervalSinceReferenceDate: -0.000_000_000_3)),
        .date(Date(timeIntervalSinceReferenceDate: 1e15 + 0.5)),
        .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
        .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .url(URL(string: "https://example.com")!),
        .url(URL(string: "https://example.com/path/to?query=1&b=%20x#fragment")!),
        .url(URL(string: "https://example.com/%E2%9C%93/caf%C3%A9?q=%F0%9F%98%80#%C3%A9")!),
        .url(URL(string: "https://xn--caf-dma.example/")!),
        .url(URL(string: "mailto:someone@example.com")!),
        .url(URL(string: "file:///tmp/a%20b.txt")!),
        .url(URL(string: "notes://note/42?line=3")!),
        .array([]), .dictionary([:]),
        .array([.array([.array([.null])]), .dictionary(["a": .array([.dictionary([:])])])]),
        .dictionary(["ключ": .string("значение"), "日本": .integer(1), "": .null, "emoji 😀": .bool(true)]),
    ]

    @Test("every case round-trips exactly", arguments: awkwardValues)
    func everyCaseRoundTrips(_ value: PropertyListValue) throws {
        expectIdentical(try Self.roundTrip(value), value)
    }

    @Test("URLs with unicode round-trip to an equal URL with the same text")
    func unicodeURL() throws {
        // Written with raw non-ASCII characters; whatever URL(string:) makes of them must survive.
        let url = try #require(URL(string: "https://example.com/café/✓?q=ü#é"))
        let decoded = try Self.roundTrip(.url(url))
        guard case .url(let back) = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(back == url)
        #expect(back.absoluteString == url.absoluteString)
    }

    @Test("a userInfo with every type round-trips exactly")
    func everyTypeUserInfo() throws {
        let userInfo = Fixtures.everyTypeUserInfo
        let bytes = PropertyListBinaryCoding.encode(userInfo)
        expectIdentical(try PropertyListBinaryCoding.decodeUserInfo(bytes), userInfo)
    }

    @Test("NaN and -0.0 are preserved bit for bit, and isIdentical tells them apart")
    func bitExactDoubles() throws {
        #expect(PropertyListValue.double(.nan).isIdentical(to: .double(.nan)))
        #expect(!PropertyListValue.double(0.0).isIdentical(to: .double(-0.0)))
        #expect(PropertyListValue.double(0.0) == .double(-0.0), "Hashable equality is numeric")
        guard case .double(let zero) = try Self.roundTrip(.double(-0.0)) else { Issue.record("not a double"); return }
        #expect(zero.sign == .minus)
        let payloadNaN = Double(bitPattern: 0xFFF4_0000_0000_1234)
        guard case .double(let nan) = try Self.roundTrip(.double(payloadNaN)) else { Issue.record("not a double"); return }
        #expect(nan.bitPattern == payloadNaN.bitPattern)
    }

    @Test("dates keep sub-microsecond fractions")
    func subMicrosecondDates() throws {
        let date = Date(timeIntervalSinceReferenceDate: 700_000_000.000_000_1)
        guard case .date(let back) = try Self.roundTrip(.date(date)) else { Issue.record("not a date"); return }
        #expect(back.timeIntervalSinceReferenceDate.bitPattern == date.timeIntervalSinceReferenceDate.bitPattern)
    }

    @Test("deep nesting up to maximumDepth round-trips")
    func nestingAtLimit() throws {
        var value = PropertyListValue.integer(7)
        for i in 0..<PropertyListBinaryCoding.maximumDepth {
            value = i.isMultiple(of: 2) ? .array([value]) : .dictionary(["k": value])
        }
        expectIdentical(try Self.roundTrip(value), value)
    }

    @Test("encoding is deterministic: dictionary keys are sorted")
    func deterministicEncoding() {
        var a: [String: PropertyListValue] = [:]
        var b: [String: PropertyListValue] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for k in keys { a[k] = .string(k) }
        for k in keys.reversed() { b[k] = .string(k) }
        #expect(PropertyListBinaryCoding.encode(a) == PropertyListBinaryCoding.encode(b))
    }

    @Test("the wire format of each tag is pinned")
    func wireFormat() {
        #expect(PropertyListBinaryCoding.encode(.null) == [0x00])
        #expect(PropertyListBinaryCoding.encode(.bool(false)) == [0x01])
        #expect(PropertyListBinaryCoding.encode(.bool(true)) == [0x02])
        #expect(PropertyListBinaryCoding.encode(.integer(0x0102_0304_0506_0708)) == [0x03, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(PropertyListBinaryCoding.encode(.integer(-1)) == [0x03] + [UInt8](repeating: 0xFF, count: 8))
        #expect(PropertyListBinaryCoding.encode(.double(1.0)) == [0x04, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(PropertyListBinaryCoding.encode(.string("hé")) == [0x05, 0, 0, 0, 3, 0x68, 0xC3, 0xA9])
        #expect(PropertyListBinaryCoding.encode(.data(Data([9]))) == [0x06, 0, 0, 0, 1, 9])
        #expect(PropertyListBinaryCoding.encode(.date(Date(timeIntervalSinceReferenceDate: 1.0))) == [0x07, 0x3F, 0xF0, 0, 0, 0, 0, 0, 0])
        #expect(PropertyListBinaryCoding.encode(.url(URL(string: "a:b")!)) == [0x08, 0, 0, 0, 3, 0x61, 0x3A, 0x62])
        #expect(PropertyListBinaryCoding.encode(.uuid(UUID(uuidString: "00010203-0405-0607-0809-0A0B0C0D0E0F")!))
            == [0x09] + (0...15).map { UInt8($0) })
        #expect(PropertyListBinaryCoding.encode(.array([.null, .bool(true)])) == [0x0A, 0, 0, 0, 2, 0x00, 0x02])
        #expect(PropertyListBinaryCoding.encode(.dictionary(["b": .null, "a": .bool(true)]))
            == [0x0B, 0, 0, 0, 2, 0, 0, 0, 1, 0x61, 0x02, 0, 0, 0, 1, 0x62, 0x00])
    }

    @Test("random values round-trip exactly and re-encode to the same bytes (seeded)", arguments: [1, 2, 3, 0xC0FFEE] as [UInt64])
    func randomValues(seed: UInt64) throws {
        var generator = RandomPropertyList(seed: seed)
        for i in 0..<1_000 {
            let value = generator.value()
            let bytes = PropertyListBinaryCoding.encode(value)
            let decoded = try PropertyListBinaryCoding.decode(bytes)
            #expect(decoded.isIdentical(to: value), "seed \(seed) value #\(i): \(value) decoded as \(decoded)")
            #expect(PropertyListBinaryCoding.encode(decoded) == bytes, "seed \(seed) value #\(i) re-encodes differently")
        }
    }

    @Test("random userInfo dictionaries round-trip through decodeUserInfo (seeded)")
    func randomUserInfo() throws {
        var generator = RandomPropertyList(seed: 0x5EED)
        for i in 0..<500 {
            let userInfo = generator.dictionary()
            let decoded = try PropertyListBinaryCoding.decodeUserInfo(PropertyListBinaryCoding.encode(userInfo))
            #expect(PropertyListValue.dictionary(decoded).isIdentical(to: .dictionary(userInfo)), "userInfo #\(i): \(userInfo)")
        }
    }
}
