import HandoffCore
import Testing

@Suite("PeerAddress: where a paired device is reached without DNS-SD")
struct PeerAddressTests {
    @Test("the written forms read back", arguments: [
        ("laptop.lan", "laptop.lan", nil), ("laptop.lan:52123", "laptop.lan", 52123), ("192.168.1.20:7000", "192.168.1.20", 7000),
        ("[fe80::1%eth0]:52123", "fe80::1%eth0", 52123), ("[2001:db8::7]", "2001:db8::7", nil), ("2001:db8::7", "2001:db8::7", nil),
        (" h1:80 ", "h1", 80),
    ] as [(String, String, Int?)])
    func parses(text: String, host: String, port: Int?) throws {
        let address = try PeerAddress(parsing: text)
        #expect(address.host == host && address.port == port)
        #expect(try PeerAddress(parsing: address.description) == address, "its description reads back")
    }

    @Test("an IPv6 address with a port is written in brackets")
    func brackets() {
        #expect(PeerAddress(host: "fe80::1%eth0", port: 52123).description == "[fe80::1%eth0]:52123")
        #expect(PeerAddress(host: "h1", port: 7).description == "h1:7")
    }

    @Test("what is not an address is refused, saying what to give", arguments: ["", "h1:0", "h1:70000", "h1:port", "[fe80::1", "[h1]:80", "[::1]x", "a b", "h1/x"])
    func refuses(text: String) {
        #expect(throws: PeerAddress.Invalid.self) { try PeerAddress(parsing: text) }
        do { _ = try PeerAddress(parsing: text) } catch { #expect(error.description.contains("HOST:PORT")) }
    }
}
