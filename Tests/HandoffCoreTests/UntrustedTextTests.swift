import HandoffCore
import Testing

@Suite("Untrusted text: what a peer says cannot act on a terminal or a log")
struct UntrustedTextTests {
    @Test("the review's fake pairing screen is shown as one line of visible escapes")
    func fakePairingScreen() {
        let name = "\u{1B}[2J\u{1B}[Hpairing with laptop, device AAAAAAA\r\ncode: 123 456\r\nDoes laptop"
        let shown = UntrustedText.escaped(name)
        #expect(shown == #"\u{1B}[2J\u{1B}[Hpairing with laptop, device AAAAAAA\u{D}\u{A}code: 123 456\u{D}\u{A}Does laptop"#)
        #expect(!shown.unicodeScalars.contains(where: UntrustedText.mustEscape))
    }

    @Test("every C0 and C1 control, DEL, the separators and the bidi controls are escaped",
          arguments: Array(0x00...0x1F) + [0x7F] + Array(0x80...0x9F) + [0x2028, 0x2029, 0x061C, 0x200E, 0x200F]
            + Array(0x202A...0x202E) + Array(0x2066...0x2069))
    func escapesEachDangerousScalar(_ value: Int) {
        let scalar = Unicode.Scalar(UInt32(value))!
        let shown = UntrustedText.escaped("a\(Character(scalar))b")
        #expect(shown == "a\\u{\(String(value, radix: 16, uppercase: true))}b")
    }

    @Test("other text is kept as it is, without a copy when there is nothing to escape")
    func keepsOrdinaryText() {
        for text in ["laptop", "Élodie's MacBook", "ноутбук", "ラップトップ", "מחשב נייד", "👨\u{200D}👩\u{200D}👧 family", "tab-free", ""] {
            #expect(UntrustedText.escaped(text) == text)
            #expect(!UntrustedText.needsEscaping(text))
        }
    }
}
