import Foundation
import HandoffCore
import HandoffTrust
import XCTest

/// Pairing against a hostile device (scripts/lab-hostile-pairer.py on h2, a stranger with its own
/// certificate) while h1 runs `handoff pair --accept`: the name it claims cannot draw on h1's
/// screen, h1 shows the device ID its certificate proves, and h1's advertising key is sent only
/// after both sides confirmed, and rotated when a pairing fails after that.
final class PairingAttackOnHostsTests: LabTestCase {
    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
    }

    struct Attack: Decodable {
        var received: [String]
        var keySeen: Bool
        var code: String?
        var deviceIDHex: String
    }

    func advertisingKey(_ host: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(try lab.path(host))/state/trust.json"))
        let store = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return try XCTUnwrap(store?["advertisingKey"] as? String)
    }

    func trusted(_ host: String) throws -> String { try lab.handoff(host, "trust", "list", "--json").stdout }

    /// h1 accepts; the hostile device on h2 claims `name` and answers `confirm`; h1's person
    /// answers `answer` once the code shows. Returns what the attacker saw and h1's screen.
    func attack(name: String, confirm: String, answer: String) throws -> (Attack, String) {
        let accept = try startPair(on: "h1", ["--accept"])
        try lab.waitUntil("h1 accepting pairing", timeout: 5) { try lab.handoff("h2", "pair", "--list").stdout.contains("h1") }
        let dir = try lab.path("h2")
        _ = try lab.exec("h2", ["sh", "-c", "test -e '\(dir)/o.key' || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=x -keyout '\(dir)/o.key' -out '\(dir)/o.crt' 2>/dev/null"])
        let log = "\(dir)/pairer-\(UUID().uuidString.prefix(6)).json"
        let script = lab.packageRoot.appendingPathComponent("scripts/lab-hostile-pairer.py").path
        _ = try lab.startBackground("h2", ["python3", script, "--host", "198.18.0.1", "--port", "\(try peerPort("h1"))",
                                           "--cert", "\(dir)/o.crt", "--key", "\(dir)/o.key", "--name", name, "--confirm", confirm, "--wait", "8"], log: log)
        _ = try code(accept)
        try self.answer(accept, answer)
        try lab.waitUntil("the hostile pairer to finish", timeout: 15) {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("deviceIDHex")
        }
        let result = try JSONDecoder().decode(Attack.self, from: Data(try String(contentsOfFile: log, encoding: .utf8).utf8))
        do { try lab.waitUntil("h1's pair to finish", timeout: 15) { text(accept).contains("nothing was stored") } } catch {
            throw LabError("\(error); h1 shows: \(text(accept)); the pairer saw \(result)")
        }
        return (result, text(accept))
    }

    func testAPeerNameCannotDrawOnThePairingScreen() throws {
        let before = try trusted("h1")
        // Forms of the same attack: CSI clear-screen and CR/LF (the review's), the 8-bit CSI
        // (U+009B), a bidi override, the Unicode line separator, and a bell with backspaces.
        let names = [
            #"\x1b[2J\x1b[Hpairing with laptop, device AAAAAAA\r\ncode: 123 456\r\nDoes laptop"#,
            #"laptop\u009b2J\u009bHcode: 123 456"#,
            #"laptop \u202e654 321 :edoc"#,
            #"laptop\u2028code: 123 456\u2029"#,
            #"\x07\x08\x08\x08\x7flaptop"#,
        ]
        for name in names {
            let (seen, screen) = try attack(name: name, confirm: "no", answer: "y")
            let raw = screen.unicodeScalars.filter { $0 != "\n" && UntrustedText.mustEscape($0) }
            XCTAssertTrue(raw.isEmpty, "h1's screen holds raw control characters \(raw.map { String($0.value, radix: 16) }) for \(name): \(screen.debugDescription)")
            XCTAssertTrue(screen.contains(#"\u{"#), "the name is shown escaped: \(screen)")
            // The code line is h1's own, and the device ID shown is the one the certificate proves.
            let codes = screen.split(separator: "\n").filter { $0.hasPrefix("code: ") }
            XCTAssertEqual(codes, ["code: \(seen.code ?? "?")"], screen)
            let proven = try DeviceID(bytes: hexBytes(seen.deviceIDHex)).description
            XCTAssertTrue(screen.contains("asks to pair") && screen.components(separatedBy: proven).count == 3,
                          "h1 shows the certificate's device ID \(proven) when asked and at the code: \(screen)")
            XCTAssertFalse(seen.keySeen, "a device that refused learnt no advertising key: \(seen.received)")
        }
        XCTAssertEqual(try trusted("h1"), before, "nothing was stored")
    }

    func testTheAdvertisingKeyTravelsOnlyAfterBothConfirmed() throws {
        let before = try advertisingKey("h1")
        // h1's person refuses while the device accepts: no key.
        let refused = try attack(name: "laptop", confirm: "yes", answer: "n").0
        XCTAssertFalse(refused.keySeen, "\(refused.received)")
        XCTAssertEqual(try advertisingKey("h1"), before, "nothing was revealed, nothing to rotate")
        // Both accept, then the device hangs up without its own key: h1 sent its key, so it rotates it.
        let accepted = try attack(name: "laptop", confirm: "yes", answer: "y").0
        XCTAssertTrue(accepted.keySeen, "both confirmed: h1 sends its key (\(accepted.received))")
        try lab.waitUntil("h1 to rotate its advertising key", timeout: 5) { try advertisingKey("h1") != before }
        XCTAssertFalse(try trusted("h1").contains("laptop"), "nothing was stored")
    }

    func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
