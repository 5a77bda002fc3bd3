import HandoffConfiguration
import Testing

@Suite("wideArea configuration")
struct WideAreaConfigurationTests {
    func parse(_ wideArea: String) throws(ConfigurationError) -> AgentConfiguration {
        let json = #"{"stateDirectory": "/tmp/s", "inboxDirectory": "/tmp/i", "wideArea": "# + wideArea + "}"
        return try ConfigurationFile.parse(Array(json.utf8), source: "/etc/handoff/handoffd.json", defaultName: "x", defaultSocketPath: "/tmp/x.sock")
    }

    static let good = #"{"domain": "handoff.test", "server": "198.18.1.254:53", "tsigKeyName": "handoff-key", "tsigAlgorithm": "hmac-sha256", "tsigSecret": "c2VjcmV0"}"#

    @Test("off unless wideArea.domain is set; read with the domain made absolute")
    func readsTheKeys() throws {
        let off = try ConfigurationFile.parse(Array(#"{"stateDirectory": "/tmp/s", "inboxDirectory": "/tmp/i"}"#.utf8), source: "/etc/h.json",
                                              defaultName: "x", defaultSocketPath: "/tmp/x.sock")
        #expect(off.wideArea == nil)
        let wideArea = try #require(try parse(Self.good).wideArea)
        #expect(wideArea.domain == "handoff.test.")
        #expect(wideArea.server == "198.18.1.254:53")
        #expect(wideArea.tsigKeyName == "handoff-key")
        #expect(wideArea.tsigAlgorithm == "hmac-sha256")
        #expect(wideArea.tsigSecret == Array("secret".utf8))
    }

    @Test("a bad value is refused naming its key", arguments: [
        (#""server": "dns.example:53""#, "wideArea.server"),
        (#""server": "198.18.1.254:0""#, "wideArea.server"),
        (#""tsigSecret": "not base64!""#, "wideArea.tsigSecret"),
        (#""tsigAlgorithm": "hmac-md5""#, "wideArea.tsigAlgorithm"),
        (#""tsigKeyName": """#, "wideArea.tsigKeyName"),
        (#""domain": "a..b""#, "wideArea.domain"),
    ])
    func refusesBadValues(change: String, key: String) {
        let field = change.split(separator: ":")[0]
        let json = Self.good.replacingOccurrences(of: #"\#(field): "[^"]*""#, with: change, options: .regularExpression)
        do {
            _ = try parse(json)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.key == key, "\(error)")
        }
    }
}
