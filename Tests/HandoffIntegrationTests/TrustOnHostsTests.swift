import Foundation
import XCTest

/// Trust on three simulated hosts: h1 and h2 are paired; h3 is an outsider on the same LAN (and
/// the pairing tests pair it, then unpair it again).
final class TrustOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2", "h3"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
        try lab.pair("h1", "h2")
    }

    func trusted(_ host: String) throws -> [String] {
        let list = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "trust", "list", "--json").stdout.utf8)) as? [[String: Any]]
        return (list ?? []).compactMap { $0["deviceID"] as? String }
    }

    /// The code and message of a failed `handoff continue --json`.
    func failure(_ result: (status: Int32, json: [String: Any])) -> (code: Int, message: String) {
        let error = result.json["error"] as? [String: Any]
        return (error?["code"] as? Int ?? 0, error?["message"] as? String ?? "\(result.json)")
    }

    // MARK: Pairing

    /// Pairs h1 (initiating) with h3 (accepting); each side answers `answers.0` / `answers.1`.
    func pairH1WithH3(answers: (String, String), target: String = "h3") throws -> (PairRun, PairRun, String) {
        let accept = try startPair(on: "h3", ["--accept"])
        try lab.waitUntil("h3 accepting pairing, seen by h1", timeout: 5) {
            try lab.handoff("h1", "pair", "--list").stdout.contains("h3")
        }
        let initiate = try startPair(on: "h1", [target])
        let codes = (try code(initiate), try code(accept))
        XCTAssertEqual(codes.0, codes.1, "both sides show the same code")
        XCTAssertNotNil(codes.0.range(of: #"^\d{3} \d{3}$"#, options: .regularExpression), "a six-digit code: \(codes.0)")
        try answer(initiate, answers.0)
        try answer(accept, answers.1)
        return (initiate, accept, codes.0)
    }

    func testPairingEndToEndBothConfirmAndThenSeeEachOther() throws {
        let (h1ID, h3ID) = (try lab.deviceID("h1"), try lab.deviceID("h3"))
        let (initiate, accept, code) = try pairH1WithH3(answers: ("y", "y"))
        try finished(initiate, containing: "paired with h3")
        try finished(accept, containing: "paired with h1")
        print("pairing code shown on both: \(code)")
        XCTAssertTrue(try trusted("h1").contains(h3ID))
        XCTAssertTrue(try trusted("h3").contains(h1ID))
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "For h3 now")
        try lab.waitUntilListed(id, on: "h3")
        try lab.handoff("h1", "resign", id)
        // Back to an outsider for the other tests.
        try lab.handoff("h1", "trust", "remove", h3ID)
        try lab.handoff("h3", "trust", "remove", h1ID)
    }

    func testPairingByAddressRemembersTheAddress() throws {
        let (h1ID, h3ID) = (try lab.deviceID("h1"), try lab.deviceID("h3"))
        let address = "198.18.0.3:\(try peerPort("h3"))"
        let (initiate, accept, _) = try pairH1WithH3(answers: ("y", "y"), target: address)
        try finished(initiate, containing: "paired with h3")
        try finished(accept, containing: "paired with h1")
        XCTAssertEqual(try addresses(on: "h1", of: h3ID), [address], "h1 paired by address: it remembers where h3 is")
        XCTAssertEqual(try addresses(on: "h3", of: h1ID), [], "h3 accepted: it was given no address")
        XCTAssertTrue(try lab.handoff("h1", "trust", "list").stdout.contains("at \(address)"))
        try lab.handoff("h1", "trust", "remove", h3ID)
        try lab.handoff("h3", "trust", "remove", h1ID)
    }

    func testTrustAddTakesAddressesAndRefusesBadOnes() throws {
        let h2ID = try lab.deviceID("h2")
        let added = try lab.handoff("h3", "trust", "add", h2ID, "--name", "h2", "--address", "198.18.0.2:7000", "--address", "[fe80::2%eth0]:7000")
        defer { _ = try? lab.handoff("h3", "trust", "remove", h2ID) }
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(try addresses(on: "h3", of: h2ID), ["198.18.0.2:7000", "[fe80::2%eth0]:7000"])
        let again = try lab.handoff("h3", "trust", "add", h2ID, "--address", "h2.lan")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try addresses(on: "h3", of: h2ID), ["198.18.0.2:7000", "[fe80::2%eth0]:7000", "h2.lan"], "addresses add up")
        let bad = try lab.handoff("h3", "trust", "add", h2ID, "--address", "h2:99999")
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("1 to 65535"), bad.stderr)
    }

    func testPairingRefusedOnOneSideStoresNothing() throws {
        let before = (try trusted("h1"), try trusted("h3"))
        let (initiate, accept, _) = try pairH1WithH3(answers: ("y", "n"))
        try finished(initiate, containing: "refused the pairing")
        try finished(accept, containing: "refused here")
        XCTAssertEqual(try trusted("h1"), before.0)
        XCTAssertEqual(try trusted("h3"), before.1)
    }

    func testPairingWithoutAcceptIsRefusedClearly() throws {
        let result = try lab.handoff("h1", "pair", "198.18.0.3:\(try peerPort("h3"))")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("not accepting pairing"), result.stderr)
        XCTAssertTrue(result.stderr.contains("4609"), result.stderr)
    }

    // MARK: Outsiders

    func testUnpairedHostGetsNothingAndSeesNothingReadable() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Secret plans")
        try lab.waitUntilListed(id, on: "h2")
        defer { _ = try? lab.handoff("h1", "resign", id) }
        // h3 lists nothing, knows no peer, and avahi-browse there shows nothing readable.
        XCTAssertTrue(try lab.offered(on: "h3").isEmpty)
        XCTAssertTrue(try lab.handoff("h3", "peers").stdout.contains("no peers"))
        let browse = try lab.exec("h3", ["avahi-browse", "-rpt", "_handoff._tcp"]).stdout
        XCTAssertTrue(browse.contains("\"v=3\""), browse)
        for secret in ["Secret", "com.example", "h1;", "h2;", id] { XCTAssertFalse(browse.contains(secret), "avahi-browse on h3 shows \(secret)") }
        // Asking h1 directly, over TLS with a certificate of its own, gets a clear refusal.
        let dir = try lab.path("h3")
        let probe = """
            import socket, ssl, subprocess
            subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
                            '-subj', '/CN=outsider', '-keyout', '\(dir)/o.key', '-out', '\(dir)/o.crt'], check=True, capture_output=True)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.minimum_version = ssl.TLSVersion.TLSv1_3
            ctx.load_cert_chain('\(dir)/o.crt', '\(dir)/o.key')
            s = ctx.wrap_socket(socket.create_connection(('198.18.0.1', \(try peerPort("h1"))), timeout=5))
            s.sendall(b'\\x02\\x00\\x00\\x00\\x00')  # a fetch frame, no hello
            data = b''
            while True:
                chunk = s.recv(4096)
                if not chunk: break
                data += chunk
            print(data.decode('utf-8', 'replace'))
            """
        let refused = try lab.exec("h3", ["python3", "-c", probe])
        XCTAssertEqual(refused.status, 0, refused.stderr)
        XCTAssertTrue(refused.stdout.contains("is not paired"), "h1 answered: \(refused.stdout)")
        XCTAssertFalse(refused.stdout.contains("Secret"), refused.stdout)
        XCTAssertFalse(refused.stdout.contains("h1"), "an outsider does not even learn the agent's name: \(refused.stdout)")
    }

    /// h1's advertising key and paired devices are copied to a new identity (a stolen trust.json,
    /// without the private key): h2 reads its advertisement, but TLS refuses it both ways.
    func testImpostorPresentingAnotherCertificateIsRefused() throws {
        let state = "\(try lab.path("h1"))/state"
        let saved = "\(try lab.path("h1"))/state-real"
        let realID = try lab.deviceID("h1")
        try lab.stopAgent("h1")
        try FileManager.default.copyItem(atPath: state, toPath: saved)
        for file in ["identity-key.pem", "identity-cert.pem"] { try FileManager.default.removeItem(atPath: "\(state)/\(file)") }
        try lab.startAgent("h1", config: ["urlOpener": ["true"]])
        defer {
            try? lab.stopAgent("h1")
            try? FileManager.default.removeItem(atPath: state)
            try? FileManager.default.moveItem(atPath: saved, toPath: state)
            try? lab.startAgent("h1", config: ["urlOpener": ["true"]])
        }
        XCTAssertNotEqual(try lab.deviceID("h1"), realID, "a new identity")

        // It holds h1's advertising key, but cannot sign as h1: h2 takes its records for forgeries
        // and never lists (nor connects to) it.
        let h2Log = "\(try lab.path("h2"))/handoffd.log"
        let mark = lab.logLines(h2Log).count
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "From the impostor")
        try lab.waitUntil("h2 refusing the impostor's record", timeout: 10) {
            lab.logLines(h2Log).dropFirst(mark).contains { $0.contains("ignoring a forged advertisement") }
        }
        XCTAssertFalse(try lab.offered(on: "h2").contains { $0["id"] as? String == id })
        let continued = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(continued.status, 1)
        XCTAssertEqual(failure(continued).code, 4608, "an activity h2 never listed is unknown to it")

        let real = try lab.publish("h2", "--type", "com.example.notes.edit", "--title", "Only for the real h1")
        defer { _ = try? lab.handoff("h2", "resign", real) }
        try lab.waitUntilListed(real, on: "h1")
        let stolen = try lab.continueActivity(real, on: "h1")
        XCTAssertEqual(stolen.status, 1)
        XCTAssertEqual(failure(stolen).code, 4609)
        XCTAssertTrue(failure(stolen).message.contains("not paired"), failure(stolen).message)
    }

    // MARK: The local socket

    func testControlSocketRefusesAnotherUser() throws {
        let dir = try lab.path("h1")
        let socket = "\(dir)/handoff.sock"
        let cli = "\(dir)/handoff-cli"
        try? FileManager.default.removeItem(atPath: cli)
        try FileManager.default.copyItem(atPath: lab.handoffCLI, toPath: cli)
        chmod(cli, 0o755)
        // Another user's CLI refuses the socket before it connects: its directory is not theirs.
        let denied = try lab.exec("h1", ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", cli, "status", "--socket", socket])
        XCTAssertEqual(denied.status, 1)
        XCTAssertTrue(denied.stderr.contains("belongs to uid \(getuid()), not to this user (uid 65534)"), denied.stderr)
        // Mode 0600: another user's process that skips that check cannot even connect.
        let request = #"{"command": "publish", "activity": {"activityType": "com.example.notes.edit"}}"#
        let script = """
            import socket, struct, sys, time
            s = socket.socket(socket.AF_UNIX)
            try: s.connect(sys.argv[1])
            except OSError as e: print("connect failed:", e); sys.exit(0)
            time.sleep(0.2)  # the request comes after the agent's refusal: it is still read
            body = sys.argv[2].encode(); s.sendall(bytes([0x20]) + struct.pack('>I', len(body)) + body)
            header = s.recv(5); n = struct.unpack('>I', header[1:])[0]; data = b''
            while len(data) < n: data += s.recv(n - len(data))
            print(data.decode())
            """
        let rawClient = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, socket, request]
        let unconnected = try lab.exec("h1", rawClient)
        XCTAssertTrue(unconnected.stdout.contains("connect failed") && unconnected.stdout.contains("ermission"), unconnected.stdout + unconnected.stderr)
        // Opened up by mistake, the agent still refuses the other uid (SO_PEERCRED).
        chmod(socket, 0o666)
        defer { chmod(socket, 0o600) }
        let refused = try lab.exec("h1", rawClient)
        XCTAssertTrue(refused.stdout.contains("refuses processes of uid 65534"), refused.stdout + refused.stderr)
        XCTAssertTrue(try lab.offered(on: "h2").isEmpty, "nothing was published")
        XCTAssertEqual(try lab.handoff("h1", "status").status, 0, "the owner still gets in")
    }

    // MARK: Hardening

    /// h3 opens 1000 connections to h1 as fast as it can and holds them, sending junk; h2's
    /// handoffs from h1 complete in their normal time meanwhile.
    func testJunkConnectionFloodDoesNotDelayAPairedHandoff() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Under fire", "--webpage-url", "https://example.com/x")
        defer { _ = try? lab.handoff("h1", "resign", id) }
        try lab.waitUntilListed(id, on: "h2")
        func timedContinue() throws -> TimeInterval {
            let start = Date()
            let result = try lab.continueActivity(id, on: "h2")
            XCTAssertEqual(result.status, 0, "\(result.json)")
            return Date().timeIntervalSince(start)
        }
        let normal = try (0..<5).map { _ in try timedContinue() }.sorted()[2]

        let port = try peerPort("h1")
        let log = "\(try lab.path("h3"))/flood.log"
        let flood = """
            import socket, time
            held, refused = [], 0
            start = time.time()
            for i in range(1000):
                try:
                    s = socket.create_connection(('198.18.0.1', \(port)), timeout=2)
                    s.sendall(b'\\x16\\x03\\x01\\x02\\x00' + bytes(64))
                    held.append(s)
                except OSError:
                    refused += 1
            time.sleep(4)
            alive = 0
            for s in held:
                try:
                    s.settimeout(0.01)
                    alive += 0 if s.recv(1) == b'' else 1
                except socket.timeout:
                    alive += 1
                except OSError:
                    pass
            print(f'opened {len(held)} refused {refused} still open after 4 s {alive} in {time.time() - start:.1f} s', flush=True)
            """
        let pid = try lab.startBackground("h3", ["python3", "-c", flood], log: log)
        Thread.sleep(forTimeInterval: 0.5)
        let during = try (0..<5).map { _ in try timedContinue() }
        try lab.waitUntil("the flood to end", timeout: 60) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("opened") }
        _ = pid
        let report = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        print("continue median \(Int(normal * 1000)) ms before the flood; during: \(during.map { Int($0 * 1000) }) ms; flood: \(report)")
        for time in during { XCTAssertLessThan(time, max(1.0, 3 * normal), "a handoff during the flood took \(time) s (normally \(normal) s)") }
        XCTAssertEqual(try lab.handoff("h1", "status").status, 0, "h1 still serves")
        XCTAssertTrue(report.contains("still open after 4 s 0 "), "no junk connection outlives the handshake deadline: \(report)")
    }
}
