import HandoffAgent
import HandoffCore
import HandoffTrust
import Testing

import Foundation

enum Sample {
    static let notesEdit = ActivityType(rawValue: "com.example.notes.edit")!
    static let mapsView = ActivityType(rawValue: "com.example.maps.view")!
    /// 2027-01-15T08:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func id(_ n: Int) -> UUID {
        let digits = String(n)
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)!
    }

    static func activity(_ n: Int, type: ActivityType = notesEdit, title: String? = nil, expiresIn: TimeInterval? = nil, eligible: Bool = true) -> Activity {
        Activity(
            id: id(n), activityType: type, title: title ?? "activity \(n)", userInfo: ["n": .integer(Int64(n))],
            isEligibleForHandoff: eligible, expirationDate: expiresIn.map { now.addingTimeInterval($0) })
    }

    static func txt(agent: String, seq: UInt64, current: Activity?) -> [UInt8] {
        ActivityAdvertisement(
            agentID: agent, sequence: seq,
            current: current.map { .init(id: $0.id, activityType: $0.activityType, title: $0.title) }
        ).txtRecord
    }
}

@Suite("ActivityStore")
struct ActivityStoreTests {
    let now = Sample.now

    @Test("a new store is empty")
    func empty() {
        let store = ActivityStore()
        #expect(store.current(at: now) == nil)
        #expect(store.all.isEmpty)
        #expect(store.sequence == 0)
        #expect(store.nextExpiration(after: now) == nil)
    }

    @Test("publish makes the activity current")
    func publishMakesCurrent() {
        var store = ActivityStore()
        let a = Sample.activity(1)
        store.publish(a)
        #expect(store.current(at: now) == a)
        #expect(store.activity(id: a.id) == a)
        #expect(store.all == [a])
    }

    @Test("a newer publication becomes current")
    func newerBecomesCurrent() {
        var store = ActivityStore()
        let a = Sample.activity(1), b = Sample.activity(2)
        store.publish(a)
        store.publish(b)
        #expect(store.current(at: now) == b)
        #expect(store.all == [a, b])
        // Publishing a again moves it to the front.
        store.publish(a)
        #expect(store.current(at: now) == a)
        #expect(store.all == [b, a])
    }

    @Test("republishing the same ID replaces the activity")
    func republishReplaces() {
        var store = ActivityStore()
        var a = Sample.activity(1, title: "old")
        store.publish(a)
        a.title = "new"
        store.publish(a)
        #expect(store.all.count == 1)
        #expect(store.current(at: now)?.title == "new")
    }

    @Test("resigning the current activity falls back to the previous one")
    func resignFallsBack() throws {
        var store = ActivityStore()
        let a = Sample.activity(1), b = Sample.activity(2), c = Sample.activity(3)
        store.publish(a)
        store.publish(b)
        store.publish(c)
        #expect(store.resign(id: c.id) == c)
        #expect(store.current(at: now) == b)
        // Resigning a non-current one keeps the current.
        #expect(store.resign(id: a.id) == a)
        #expect(store.current(at: now) == b)
        #expect(store.resign(id: b.id) == b)
        #expect(store.current(at: now) == nil)
        #expect(store.all.isEmpty)
    }

    @Test("resigning an unknown ID returns nil and changes nothing")
    func resignUnknown() {
        var store = ActivityStore()
        store.publish(Sample.activity(1))
        let sequence = store.sequence
        #expect(store.resign(id: Sample.id(99)) == nil)
        #expect(store.sequence == sequence)
        #expect(store.all.count == 1)
    }

    @Test("the sequence increases on every change")
    func sequenceIncreases() {
        var store = ActivityStore()
        var seen: [UInt64] = [store.sequence]
        store.publish(Sample.activity(1)); seen.append(store.sequence)
        store.publish(Sample.activity(2)); seen.append(store.sequence)
        store.publish(Sample.activity(1)); seen.append(store.sequence)
        store.resign(id: Sample.id(2)); seen.append(store.sequence)
        store.publish(Sample.activity(3, expiresIn: 10)); seen.append(store.sequence)
        _ = store.removeExpired(at: now.addingTimeInterval(11)); seen.append(store.sequence)
        #expect(seen == seen.sorted())
        #expect(Set(seen).count == seen.count, "every change bumps the sequence: \(seen)")
    }

    @Test("expired activities are not current")
    func expiredNotCurrent() {
        var store = ActivityStore()
        let older = Sample.activity(1)
        let expiring = Sample.activity(2, expiresIn: 60)
        store.publish(older)
        store.publish(expiring)
        #expect(store.current(at: now) == expiring)
        #expect(store.current(at: now.addingTimeInterval(59)) == expiring)
        // At the expiration date it is expired.
        #expect(store.current(at: now.addingTimeInterval(60)) == older)
        #expect(store.current(at: now.addingTimeInterval(3600)) == older)
    }

    @Test("an activity not eligible for handoff is never current, nor is an older one in its place (Apple's behaviour)")
    func ineligibleNotCurrent() {
        var store = ActivityStore()
        let a = Sample.activity(1)
        store.publish(a)
        store.publish(Sample.activity(2, eligible: false))
        #expect(store.current(at: now) == nil)
        #expect(store.all.count == 2)
        // Publishing the older one again makes it the newest, and current.
        store.publish(a)
        #expect(store.current(at: now) == a)
    }

    @Test("an ineligible newest activity leaves the clipboard item advertised")
    func ineligibleKeepsClipboard() {
        var store = ActivityStore()
        let clip = Activity(activityType: .clipboard, title: "copied")
        store.publish(clip)
        store.publish(Sample.activity(1, eligible: false))
        #expect(store.current(at: now) == nil)
        #expect(store.clipboardItem(at: now) == clip)
    }

    @Test("removeExpired drops the expired ones and returns them")
    func removeExpired() {
        var store = ActivityStore()
        let keep = Sample.activity(1)
        let soon = Sample.activity(2, expiresIn: 10)
        let later = Sample.activity(3, expiresIn: 100)
        store.publish(keep)
        store.publish(soon)
        store.publish(later)

        #expect(store.removeExpired(at: now).isEmpty)
        let sequence = store.sequence
        #expect(store.removeExpired(at: now.addingTimeInterval(5)).isEmpty)
        #expect(store.sequence == sequence, "nothing expired, nothing changed")

        #expect(store.removeExpired(at: now.addingTimeInterval(10)) == [soon])
        #expect(store.all == [keep, later])
        #expect(store.activity(id: soon.id) == nil)
        #expect(store.removeExpired(at: now.addingTimeInterval(1000)) == [later])
        #expect(store.all == [keep])
        #expect(store.current(at: now.addingTimeInterval(1000)) == keep)
    }

    @Test("nextExpiration is the earliest expiration after now")
    func nextExpiration() {
        var store = ActivityStore()
        store.publish(Sample.activity(1))
        #expect(store.nextExpiration(after: now) == nil)
        store.publish(Sample.activity(2, expiresIn: 100))
        store.publish(Sample.activity(3, expiresIn: 10))
        store.publish(Sample.activity(4, expiresIn: 50))
        #expect(store.nextExpiration(after: now) == now.addingTimeInterval(10))
        #expect(store.nextExpiration(after: now.addingTimeInterval(10)) == now.addingTimeInterval(50))
        #expect(store.nextExpiration(after: now.addingTimeInterval(60)) == now.addingTimeInterval(100))
        #expect(store.nextExpiration(after: now.addingTimeInterval(100)) == nil)
    }
}

@Suite("PeerDirectory")
struct PeerDirectoryTests {
    static let ownID = "0123456789abcdef0123456789abcdef"

    func update(_ directory: inout PeerDirectory, _ name: String, agent: String, seq: UInt64, current: Activity?, port: UInt16 = 7000) -> PeerDirectory.Update {
        directory.update(
            name: name, hostTarget: "\(name).local.", addresses: ["192.0.2.\(port % 250)"], port: port,
            txtRecord: Sample.txt(agent: agent, seq: seq, current: current))
    }

    @Test("a valid advertisement adds the peer; the same again is unchanged; a new sequence is a change")
    func addedUnchangedChanged() throws {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        let a = Sample.activity(1, title: "Shopping list")
        #expect(update(&directory, "h2", agent: "peer2", seq: 1, current: a) == .added)
        #expect(update(&directory, "h2", agent: "peer2", seq: 1, current: a) == .unchanged)
        #expect(update(&directory, "h2", agent: "peer2", seq: 2, current: a) == .changed)
        #expect(update(&directory, "h2", agent: "peer2", seq: 2, current: a, port: 7001) == .changed)

        let peer = try #require(directory.peer(named: "h2"))
        #expect(peer.advertisement.agentID == "peer2")
        #expect(peer.advertisement.sequence == 2)
        #expect(peer.port == 7001)
        #expect(peer.hostTarget == "h2.local.")
        #expect(peer.endpoint == PeerEndpoint(host: "192.0.2.1", port: 7001))
        #expect(directory.all.map(\.name) == ["h2"])
    }

    @Test("a peer without addresses is reached by its host name")
    func endpointFallsBackToHostName() throws {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        _ = directory.update(name: "h3", hostTarget: "h3.local.", addresses: [], port: 7002, txtRecord: Sample.txt(agent: "p3", seq: 0, current: nil))
        #expect(directory.peer(named: "h3")?.endpoint == PeerEndpoint(host: "h3.local.", port: 7002))
    }

    @Test("the agent's own advertisement is recognised and not listed")
    func ownAdvertisement() {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        #expect(update(&directory, "me", agent: Self.ownID, seq: 3, current: Sample.activity(1)) == .ownAdvertisement)
        #expect(directory.all.isEmpty)
        #expect(directory.offered.isEmpty)
        #expect(directory.peer(offering: Sample.id(1)) == nil)
    }

    @Test("foreign and malformed TXT records are ignored and not listed")
    func ignored() {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        func txt(_ strings: [String]) -> [UInt8] { strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } }
        let records: [[UInt8]] = [
            [],  // no keys at all
            [0],  // one empty string
            txt(["path=/printer", "rp=queue"]),  // another service's TXT
            txt(["v=3", "id=x", "seq=1"]),  // a version this agent does not speak
            txt(["v=2", "seq=1"]),  // no agent ID
            txt(["v=2", "id=x", "seq=minus one"]),  // seq not a number
            txt(["v=2", "id=x", "seq=1", "aid=not-a-uuid", "type=com.example.a"]),
            txt(["v=2", "id=x", "seq=1", "aid=\(Sample.id(1).uuidString)", "type=not_reverse_dns"]),
            [20, UInt8(ascii: "v"), UInt8(ascii: "=")],  // length runs past the end
        ]
        for (i, record) in records.enumerated() {
            let result = directory.update(name: "svc\(i)", hostTarget: "x.local.", addresses: [], port: 1, txtRecord: record)
            guard case .ignored(let why) = result else {
                Issue.record("record \(i) was \(result), expected ignored")
                continue
            }
            #expect(!why.isEmpty)
        }
        #expect(directory.all.isEmpty)
        #expect(directory.offered.isEmpty)
    }

    @Test("a known peer whose TXT turns malformed is dropped")
    func knownPeerTurnsMalformed() {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        let a = Sample.activity(1)
        #expect(update(&directory, "h2", agent: "peer2", seq: 1, current: a) == .added)
        let result = directory.update(name: "h2", hostTarget: "h2.local.", addresses: [], port: 7000, txtRecord: Array("\u{05}junk!".utf8))
        #expect(result != .added && result != .changed && result != .unchanged)
        #expect(directory.all.isEmpty)
        #expect(directory.peer(offering: a.id) == nil)
    }

    @Test("offered lists every peer's current activity")
    func offered() {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        let a = Sample.activity(1, type: Sample.notesEdit, title: "Notes")
        let b = Sample.activity(2, type: Sample.mapsView, title: "Map of Berlin")
        _ = update(&directory, "zeta", agent: "pz", seq: 4, current: b)
        _ = update(&directory, "alpha", agent: "pa", seq: 1, current: a)
        _ = update(&directory, "idle", agent: "pi", seq: 0, current: nil)

        #expect(directory.all.map(\.name) == ["alpha", "idle", "zeta"])
        let offered = directory.offered
        #expect(offered.map(\.id) == [a.id, b.id])
        #expect(offered.map(\.peer) == ["alpha", "zeta"])
        #expect(offered.map(\.activityType) == [Sample.notesEdit.rawValue, Sample.mapsView.rawValue])
        #expect(offered.map(\.title) == ["Notes", "Map of Berlin"])
        #expect(directory.peer(offering: a.id)?.name == "alpha")
        #expect(directory.peer(offering: b.id)?.name == "zeta")
        #expect(directory.peer(offering: Sample.id(3)) == nil)

        // A new current activity replaces the old one in the list.
        let c = Sample.activity(3)
        _ = update(&directory, "alpha", agent: "pa", seq: 2, current: c)
        #expect(directory.offered.map(\.id) == [c.id, b.id])
        #expect(directory.peer(offering: a.id) == nil)
    }

    @Test("a removed peer is found as departed, until it re-appears")
    func departed() throws {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        let a = Sample.activity(1)
        _ = update(&directory, "h2", agent: "peer2", seq: 1, current: a)

        let removedRecord = directory.remove(name: "h2")
        let removed = try #require(removedRecord)
        #expect(removed.name == "h2")
        #expect(directory.all.isEmpty)
        #expect(directory.offered.isEmpty)
        #expect(directory.peer(offering: a.id) == nil)
        #expect(directory.departedPeer(offering: a.id)?.name == "h2")
        #expect(directory.departedPeer(offering: Sample.id(9)) == nil)

        // Removing again does nothing.
        #expect(directory.remove(name: "h2") == nil)
        #expect(directory.remove(name: "never-seen") == nil)

        // Back again: offered, no longer departed.
        #expect(update(&directory, "h2", agent: "peer2", seq: 1, current: a) == .added)
        #expect(directory.peer(offering: a.id)?.name == "h2")
        #expect(directory.departedPeer(offering: a.id) == nil)
    }

    @Test("a departed peer that comes back under another name (same agent) is no longer departed")
    func departedRenamed() {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        let a = Sample.activity(1)
        _ = update(&directory, "h2", agent: "peer2", seq: 1, current: a)
        directory.remove(name: "h2")
        #expect(update(&directory, "h2 #2", agent: "peer2", seq: 2, current: nil) == .added)
        #expect(directory.departedPeer(offering: a.id) == nil)
    }

    @Test("the departed list is bounded; the oldest are forgotten first")
    func departedCapacity() {
        var directory = PeerDirectory(ownAgentID: Self.ownID)
        let capacity = PeerDirectory.departedCapacity
        #expect(capacity > 0)
        let count = capacity + 5
        for i in 0..<count {
            _ = update(&directory, "peer\(i)", agent: "agent\(i)", seq: 1, current: Sample.activity(i))
            directory.remove(name: "peer\(i)")
        }
        for i in 0..<5 { #expect(directory.departedPeer(offering: Sample.id(i)) == nil, "peer\(i) should be forgotten") }
        for i in 5..<count { #expect(directory.departedPeer(offering: Sample.id(i))?.name == "peer\(i)") }
    }
}

@Suite("PeerDirectory: reachability from liveness")
struct PeerDirectoryReachabilityTests {
    static let device = DeviceID(certificateDER: Array("liveness peer certificate".utf8))

    func directory(offering activity: Activity) -> PeerDirectory {
        var directory = PeerDirectory(ownAgentID: PeerDirectoryTests.ownID)
        _ = directory.update(name: "handoff-abc", hostTarget: "h1.local.", addresses: ["192.0.2.1"], port: 7000,
                             txtRecord: Sample.txt(agent: "peer1", seq: 1, current: activity), deviceID: Self.device)
        return directory
    }

    @Test("an unreachable peer stays listed but offers nothing; its activity is found as unreachable with when it was last heard")
    func unreachableHidesActivities() throws {
        let activity = Sample.activity(1)
        var directory = directory(offering: activity)
        #expect(directory.isReachable(try #require(directory.all.first)))
        let changed = directory.setReachable(Self.device, false, lastHeard: Sample.now)
        let changedAgain = directory.setReachable(Self.device, false, lastHeard: Sample.now)
        #expect(changed)
        #expect(!changedAgain, "no change the second time")
        #expect(directory.all.count == 1)
        #expect(!directory.isReachable(try #require(directory.all.first)))
        #expect(directory.offered.isEmpty)
        #expect(directory.peer(offering: activity.id) == nil)
        let silent = try #require(directory.unreachablePeer(offering: activity.id))
        #expect(silent.peer.instanceName == "handoff-abc")
        #expect(silent.lastHeard == Sample.now)
        #expect(directory.unreachablePeer(offering: Sample.id(2)) == nil)
    }

    @Test("a peer that answers again offers its activity again")
    func reachableAgain() {
        let activity = Sample.activity(1)
        var directory = directory(offering: activity)
        directory.setReachable(Self.device, false, lastHeard: nil)
        let changed = directory.setReachable(Self.device, true)
        #expect(changed)
        #expect(directory.offered.map(\.id) == [activity.id])
        #expect(directory.peer(offering: activity.id) != nil)
        #expect(directory.unreachablePeer(offering: activity.id) == nil)
    }

    @Test("unpairing forgets the device's reachability")
    func unpairForgets() {
        var directory = directory(offering: Sample.activity(1))
        directory.setReachable(Self.device, false, lastHeard: nil)
        directory.removeAll(deviceID: Self.device)
        _ = directory.update(name: "handoff-def", hostTarget: "h1.local.", addresses: ["192.0.2.1"], port: 7001,
                             txtRecord: Sample.txt(agent: "peer1b", seq: 1, current: Sample.activity(2)), deviceID: Self.device)
        #expect(directory.offered.count == 1)
    }
}
