import Foundation
import HandoffCore
import XCTest

/// The foundation scenarios on an IPv6-only LAN (`scripts/lab up 3 --ipv6-only`: each host has
/// fd00:198:18::K and fe80::K on eth0, no IPv4, and avahi-daemon publishes AAAA records over
/// IPv6 only): discovery, continuing with the userInfo and the webpage fallback, a continuation
/// stream, `watch`, pairing at a link-local `[fe80::K%eth0]:PORT` address, and a host found and
/// continued at its link-local address alone. h1 publishes, h2
/// continues, h3 is an outsider that h2 pairs with at its link-local address.
final class IPv6OnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }
    override class var ipv6Only: Bool { true }
    static let type = "com.example.ipv6.note"

    override class func prepare(_ lab: LabDriver) throws {
        let dir = try lab.path("h2")
        try lab.startAgent("h1", config: ["urlOpener": ["true"]])
        try lab.startAgent("h2", config: [
            "handlers": [["activityTypes": [type], "command": ["sh", "-c", "cat > \"\(dir)/received-$HANDOFF_ACTIVITY_ID.json\""]]],
            "urlOpener": ["sh", "-c", "echo \"$1\" >> \"\(dir)/opened-urls\"", "sh"],
        ])
        try lab.startAgent("h3", config: ["urlOpener": ["true"]])
        try lab.pair("h1", "h2")
    }

    /// `handoff peers --json` on a host, parsed.
    func peers(on host: String) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "peers", "--json").stdout.utf8)) as? [[String: Any]] ?? []
    }

    func testTheLabHasNoIPv4() throws {
        XCTAssertEqual(try lab.address("h1"), "fd00:198:18::1")
        let addresses = try lab.exec("h1", ["ip", "-o", "addr", "show", "dev", "eth0"]).stdout
        XCTAssertFalse(addresses.contains("inet "), addresses)
        XCTAssertTrue(addresses.contains("inet6 fd00:198:18::1/64"), addresses)
    }

    // MARK: Discovery

    func testPublishedActivityIsListedOnPeerWithinTwoSecondsAtItsIPv6Address() throws {
        let id = try lab.publish("h1", "--type", Self.type, "--title", "Over IPv6")
        let elapsed = try lab.waitUntilListed(id, on: "h2", timeout: 2)
        print("ipv6: listed on h2 after \(Int(elapsed * 1000)) ms")
        let entry = try XCTUnwrap(try lab.offered(on: "h2").first { $0["id"] as? String == id })
        XCTAssertEqual(entry["peer"] as? String, "h1")
        XCTAssertEqual(entry["title"] as? String, "Over IPv6")
        let h1 = try XCTUnwrap(try peers(on: "h2").first { $0["name"] as? String == "h1" })
        XCTAssertEqual(h1["addresses"] as? [String], ["fd00:198:18::1"], "the AAAA record of h1.local: \(h1)")
        try lab.handoff("h1", "resign", id)
    }

    // MARK: Continuing

    func testContinueFetchesTheUserInfoOverIPv6() throws {
        let userInfo = #"{"text": "héllo over v6", "n": 6, "nested": {"list": [1, "two"]}}"#
        let id = try lab.publish("h1", "--type", Self.type, "--title", "With userInfo", "--user-info", userInfo)
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "handler")
        let text = try String(contentsOfFile: "\(try lab.path("h2"))/received-\(id).json", encoding: .utf8)
        let activity = try Activity(json: try JSONValue(parsing: text))
        let expected = try UserInfo(userInfoJSON: try JSONValue(parsing: userInfo))
        XCTAssertTrue(PropertyListValue.dictionary(activity.userInfo).isIdentical(to: .dictionary(expected)), "\(activity.userInfo)")
        try lab.handoff("h1", "resign", id)
    }

    func testWithoutHandlerTheWebpageURLIsOpened() throws {
        let id = try lab.publish("h1", "--type", "com.example.browser.page", "--webpage-url", "https://example.com/v6?id=6")
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "urlOpener")
        let opened = try String(contentsOfFile: "\(try lab.path("h2"))/opened-urls", encoding: .utf8)
        XCTAssertTrue(opened.contains("https://example.com/v6?id=6"))
        try lab.handoff("h1", "resign", id)
    }

    func testAnAttachmentOnContinuationStreamsArrivesWhole() throws {
        try assertAttachmentWhole(try continueAttachment(bytes: 1 << 20, label: "ipv6-stream"), bytes: 1 << 20, timeout: 10)
    }

    func testWatchSeesTheOfferAndTheContinue() throws {
        let watch = try startWatch("ipv6-watch")
        defer { _ = try? lab.exec("h2", ["kill", "\(watch.pid)"]) }
        let id = try lab.publish("h1", "--type", Self.type, "--title", "Watched over IPv6")
        let offered = try waitForEvent(watch.log, "activityOffered") { $0["id"] as? String == id }.event
        XCTAssertEqual(offered["peer"] as? String, "h1")
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        let continued = try waitForEvent(watch.log, "continued") { $0["id"] as? String == id }.event
        XCTAssertEqual(continued["by"] as? String, "handler")
        try lab.handoff("h1", "resign", id)
    }

    // MARK: Link-local

    /// h2 pairs with h3 at h3's link-local address, `[fe80::3%eth0]:PORT`, remembers it, and
    /// then continues h3's activity. (h2, not h1: unpairing rotates the advertising keys of the
    /// two devices, and h2 would wait out KeyProbeSchedule's retry interval to read a rotated
    /// key of h1's in the tests after this one.)
    func testPairingAtALinkLocalAddressThenContinuing() throws {
        let (h2ID, h3ID) = (try lab.deviceID("h2"), try lab.deviceID("h3"))
        let linkLocal = try lab.address("h3", linkLocal: true)
        XCTAssertEqual(linkLocal, "fe80::3%eth0")
        let target = PeerAddress(host: linkLocal, port: try peerPort("h3")).description
        let accept = try startPair(on: "h3", ["--accept"])
        try lab.waitUntil("h3 accepting pairing, seen by h2", timeout: 5) { try lab.handoff("h2", "pair", "--list").stdout.contains("h3") }
        let initiate = try startPair(on: "h2", [target])
        XCTAssertEqual(try code(initiate), try code(accept))
        try answer(initiate, "y")
        try answer(accept, "y")
        try finished(initiate, containing: "paired with h3")
        try finished(accept, containing: "paired with h2")
        XCTAssertEqual(try addresses(on: "h2", of: h3ID), [target], "h2 remembers h3 at its link-local address")

        let id = try lab.publish("h3", "--type", "com.example.browser.page", "--webpage-url", "https://example.com/from-h3")
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "urlOpener")
        try lab.handoff("h3", "resign", id)
        try lab.handoff("h2", "trust", "remove", h3ID)
        try lab.handoff("h3", "trust", "remove", h2ID)
    }

    /// h1's addresses on h2, from `handoff peers --json`.
    func h1Addresses() throws -> [String]? {
        try peers(on: "h2").first { $0["name"] as? String == "h1" }?["addresses"] as? [String]
    }

    /// With its ULA removed, h1 has only fe80::1: Avahi publishes that, h2 gets it with the scope
    /// of the interface the AAAA record came on (`fe80::1%eth0`) and continues h1's activity there.
    func testALinkLocalOnlyHostIsFoundWithItsScopeAndContinued() throws {
        XCTAssertEqual(try lab.exec("h1", ["ip", "addr", "del", "fd00:198:18::1/64", "dev", "eth0"]).status, 0)
        defer {
            _ = try? lab.exec("h1", ["ip", "addr", "add", "fd00:198:18::1/64", "dev", "eth0", "nodad"])
            _ = try? lab.waitUntil("h1 back at its ULA on h2", timeout: 10) { try h1Addresses() == ["fd00:198:18::1"] }
        }
        let found = try lab.waitUntil("h1 at its link-local address on h2", timeout: 10) { try h1Addresses() == ["fe80::1%eth0"] }
        print("ipv6: h1 found at fe80::1%eth0 on h2 \(Int(found * 1000)) ms after its ULA went")
        let id = try lab.publish("h1", "--type", "com.example.browser.page", "--webpage-url", "https://example.com/link-local")
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "urlOpener")
        try lab.handoff("h1", "resign", id)
    }
}
