@testable import HandoffTrust
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Base64 of sealed advertisements: standard, padded, strict")
struct Base64Tests {
    @Test("every length from 0 to 200 is written as Foundation writes it, and reads back")
    func roundTrips() {
        var generator = SplitMix64(seed: 64)
        for length in 0...200 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let text = Base64.encode(bytes)
            #expect(String(decoding: text, as: UTF8.self) == Data(bytes).base64EncodedString())
            #expect(Base64.decode(text) == bytes, "length \(length)")
        }
    }

    @Test("what is not strict standard base64 is refused", arguments: [
        "QQ", "QUJ", "QUJDR", // not a multiple of four
        "QQ=A", "Q===", "====", "QQ==QUJD", // padding not at the end, or too much
        "QR==", "QUJ=", // unused bits not zero
        "QU*D", "QU D", "QU-D", "QU_D", "QUJ\n", // characters outside the alphabet
    ])
    func refusesNonStrict(text: String) {
        #expect(Base64.decode(Array(text.utf8)) == nil)
    }
}
