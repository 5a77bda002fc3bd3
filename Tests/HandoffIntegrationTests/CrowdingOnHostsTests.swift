import Foundation
import XCTest

/// An outsider on the LAN (h3) tries to hide or starve the paired hosts h1 and h2: by publishing
/// more junk advertisements than a browser follows, and by flooding h1's listener from many
/// addresses. The paired hosts must keep finding and continuing each other.
final class CrowdingOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2", "h3"] { try lab.startAgent(host, config: ["urlOpener": ["true"], "logLevel": "debug"]) }
        try lab.pair("h1", "h2")
    }

    /// 70 junk `_handoff._tcp` advertisements from h3 (more than the 32 a browser follows), then h2
    /// restarts its agent (a new random instance name) while h3 publishes 30 more (more than the
    /// places h2 and the agents' goodbyes free): h1 still finds h2 within 15 s, and lists its
    /// activity once the TXT update comes through (within 45 s). Meanwhile h1's agent holds at most
    /// its budget of dns_sd refs (each a thread and a system-bus connection with Avahi), and the
    /// system bus still takes a new connection of the same user: a table of 64 instances once took
    /// 255 of the 256 the bus allows one user, and `dbus-send` was refused.
    func testJunkAdvertisementsDoNotHideARestartedPairedPeer() throws {
        let wave = "\(try lab.path("h3"))/second-wave"
        let publisher = """
            import os, signal, subprocess, sys, time
            procs = []
            def stop(*_):
                for p in procs: p.terminate()
                sys.exit(0)
            signal.signal(signal.SIGTERM, stop)
            def publish(first, count):
                for i in range(first, first + count):
                    procs.append(subprocess.Popen(['avahi-publish', '-s', f'junk-{i}', '_handoff._tcp', str(40000 + i),
                                                   'v=2', 's0=' + 'A' * 48], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                print(f'published {first + count}', flush=True)
            publish(0, 70)
            while not os.path.exists('\(wave)'): time.sleep(0.1)
            publish(70, 30)
            time.sleep(120)
            stop()
            """
        let log = try startLogged("h3", ["python3", "-c", publisher], log: "junk-publisher")
        try lab.waitForLine(log, "published 70")
        // h1 has found the junk (its table is full) before h2 goes away.
        try lab.waitUntil("h1 to browse 70 junk instances", timeout: 20) {
            let browse = try lab.exec("h1", ["avahi-browse", "-pt", "_handoff._tcp"]).stdout
            return browse.split(separator: "\n").filter { $0.contains("junk-") }.count >= 70
        }
        Thread.sleep(forTimeInterval: 2)
        let browserThreads = try lab.agentThreads("h1", named: "dnssd-browser")
        print("h1's dnssd-browser threads among 70 junk advertisements: \(browserThreads)")
        XCTAssertLessThanOrEqual(browserThreads, 2 + 128, "the poller, the browse, and at most 128 refs for the instances followed")
        let bus = try lab.exec("h1", ["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus.ListNames"])
        XCTAssertEqual(bus.status, 0, "the system bus refused a new connection of the agent's user: \(bus.stderr)")
        try lab.stopAgent("h2")
        FileManager.default.createFile(atPath: wave, contents: Data())
        try lab.waitForLine(log, "published 100")
        Thread.sleep(forTimeInterval: 2)
        try lab.startAgent("h2", config: ["urlOpener": ["true"], "logLevel": "debug"])
        let id = try lab.publish("h2", "--type", "com.example.notes.edit", "--title", "Still here", "--webpage-url", "https://example.com/x")
        defer { _ = try? lab.handoff("h2", "resign", id) }
        let took: TimeInterval
        do {
            // The finding: junk must not hide the device. h1 finds the restarted h2 within 15 s.
            let found = try lab.waitUntil("h1 to find the restarted h2", timeout: 15) {
                try lab.handoff("h1", "peers").stdout.split(separator: "\n").contains { $0.hasPrefix("h2 ") && !$0.contains("unreachable") }
            }
            print("h1 found the restarted h2 after \(String(format: "%.1f", found)) s among 100 junk advertisements")
            // Its activity follows with the next TXT update, which Avahi and D-Bus deliver late while
            // the browser rotates the junk instances (up to about 190 D-Bus connections every 5 s).
            took = try lab.waitUntilListed(id, on: "h1", timeout: 45)
        } catch {
            let agentLog = lab.logLines("\(try lab.path("h1"))/handoffd.log")
            let h2Instance = try lab.handoff("h2", "status", "--json").stdout
            print("h2 status: \(h2Instance)")
            print(agentLog.filter { !$0.contains("junk-") || $0.contains("turn") }.suffix(60).joined(separator: "\n"))
            print("turn lines: \(agentLog.filter { $0.contains("turn") }.count)")
            throw error
        }
        print("h1 listed the restarted h2's activity after \(String(format: "%.1f", took)) s among 100 junk advertisements")
        // Liveness reaches the new instance a moment after discovery (4609 until then).
        var last: [String: Any] = [:]
        let continuedAfter = try? lab.waitUntil("h1 to continue h2's activity", timeout: 10) {
            let result = try lab.continueActivity(id, on: "h1")
            last = result.json
            return result.status == 0
        }
        XCTAssertNotNil(continuedAfter, "\(last)")
    }

    /// h3 takes 16 more addresses and floods h1's listener from all of them (8 connections each,
    /// reopened as soon as they close, for 20 s), more than the 64 pre-authentication places; h2 restarts
    /// meanwhile, so its connections to h1 are all new, and its continuations still succeed.
    func testFloodFromManyAddressesDoesNotLockOutAPairedPeer() throws {
        let addresses = (100..<116).map { "198.18.0.\($0)" }
        for address in addresses { try lab.exec("h3", ["ip", "addr", "add", "\(address)/24", "dev", "eth0"]) }
        defer { for address in addresses { _ = try? lab.exec("h3", ["ip", "addr", "del", "\(address)/24", "dev", "eth0"]) } }
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Under a crowd", "--webpage-url", "https://example.com/x")
        defer { _ = try? lab.handoff("h1", "resign", id) }
        try lab.waitUntilListed(id, on: "h2")
        try lab.stopAgent("h2")

        let port = try XCTUnwrap((try JSONSerialization.jsonObject(
            with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as? [String: Any])?["port"] as? Int)
        let flood = """
            import socket, threading, time
            lock = threading.Lock()
            stats = {'opened': 0, 'short': 0, 'held': 0, 'failed': 0}
            end = time.time() + 20
            def worker(source):
                while time.time() < end:
                    s = socket.socket()
                    try:
                        s.bind((source, 0))
                        s.settimeout(3)
                        s.connect(('198.18.0.1', \(port)))
                        started = time.time()
                        with lock: stats['opened'] += 1
                        try: s.recv(1)
                        except OSError: pass
                        with lock: stats['held' if time.time() - started >= 0.9 else 'short'] += 1
                    except OSError:
                        with lock: stats['failed'] += 1
                        time.sleep(0.05)
                    finally:
                        s.close()
                    time.sleep(0.02)
            threads = [threading.Thread(target=worker, args=(a,), daemon=True) for a in \(addresses) for _ in range(8)]
            for t in threads: t.start()
            print('flooding', flush=True)
            for t in threads: t.join()
            print('done', stats, flush=True)
            """
        let log = try startLogged("h3", ["python3", "-c", flood], log: "flood")
        try lab.waitForLine(log, "flooding")
        Thread.sleep(forTimeInterval: 2)
        try lab.startAgent("h2", config: ["urlOpener": ["true"], "logLevel": "debug"])
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        var codes: [Int] = []
        for _ in 0..<5 {
            let result = try lab.continueActivity(id, on: "h2")
            codes.append(result.status == 0 ? 0 : result.json.errorCode ?? -1)
            if result.status != 0 { print("continue failed: \(result.json)") }
        }
        try lab.waitForLine(log, "done", timeout: 30)
        print("continuations from h2 during the flood: \(codes); flood: \(lab.logLines(log).last ?? "")")
        XCTAssertEqual(codes, [0, 0, 0, 0, 0], "a paired peer was locked out (4609 is connectionUnavailable)")
    }
}
