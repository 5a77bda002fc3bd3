import Foundation
import HandoffCore
import HandoffDiscovery
import HandoffTrust
import Testing

@testable import HandoffAgent

/// One device's records arriving by both ways at once: pushed on the liveness connection and
/// resolved over DNS-SD, in any order (docs/PROTOCOL.md, "Pushed advertisements"). The newest
/// signed record wins by either way; the same record by both is one update.
@Suite("AdvertisementIntake: the same device's records pushed and resolved over DNS-SD")
struct PushedAndResolvedTests {
    let t0 = AgentInstant(sinceStart: .seconds(100))
    let senders = AdvertisementCoreTests().senders

    func record(_ n: Int?, timestamp: UInt64) -> DiscoveredService {
        let txt = TestPeer.seal(Sample.txt(agent: "peer-kitchen", seq: UInt64(timestamp), current: n.map { Sample.activity($0) }),
                                instanceName: "kitchen", timestamp: timestamp)
        return AdvertisementTrustTests.service("kitchen", txt)
    }

    func resolve(_ service: DiscoveredService, pushed: Bool, _ intake: inout AdvertisementIntake, _ directory: inout PeerDirectory)
        -> [AdvertisementIntake.Directive] {
        intake.resolved(service, pushedBy: pushed ? TestPeer.deviceID : nil, senders: senders, isPaired: { _ in true },
                        directory: &directory, now: t0)
    }

    @Test("the same record pushed, then resolved (and the other way round): taken once, the peer unchanged by the second", arguments: [true, false])
    func sameRecordBothWays(pushedFirst: Bool) {
        var intake = AdvertisementCoreTests().intake()
        var directory = PeerDirectory(ownAgentID: "self")
        _ = resolve(record(1, timestamp: 1_000), pushed: false, &intake, &directory)
        let second = record(2, timestamp: 2_000)
        let first = resolve(second, pushed: pushedFirst, &intake, &directory)
        #expect(first.contains(.saveSeenNow) || first.contains { if case .saveSeen = $0 { true } else { false } })
        let before = directory.peer(instance: "kitchen")
        let again = resolve(second, pushed: !pushedFirst, &intake, &directory)
        #expect(!again.contains(.saveSeenNow), "the same record again is no news")
        let after = directory.peer(instance: "kitchen")
        #expect(after?.advertisement == before?.advertisement)
        #expect(after?.advertisement.current?.id == Sample.id(2))
        #expect(after?.via == .dnsSD, "DNS-SD stays the way to the peer")
    }

    @Test("an older record arriving late never rolls back the newer one, whichever way each came", arguments: [true, false])
    func noRollBack(newerPushed: Bool) {
        var intake = AdvertisementCoreTests().intake()
        var directory = PeerDirectory(ownAgentID: "self")
        let older = record(1, timestamp: 1_000)
        _ = resolve(older, pushed: false, &intake, &directory)
        _ = resolve(record(nil, timestamp: 3_000), pushed: newerPushed, &intake, &directory)  // withdrawn
        #expect(directory.peer(instance: "kitchen")?.advertisement.current == nil)
        for late in [older, record(2, timestamp: 2_000)] {
            #expect(resolve(late, pushed: !newerPushed, &intake, &directory) == [])
            #expect(directory.peer(instance: "kitchen")?.advertisement.current == nil, "the withdrawal stands")
        }
        #expect(intake.pushedTimestamps[TestPeer.deviceID] == (newerPushed ? 3_000 : nil))
    }

    /// The peer resolved over DNS-SD, then a goodbye heard for it while its device answers.
    func afterGoodbye() -> (AdvertisementIntake, PeerDirectory) {
        var intake = AdvertisementCoreTests().intake()
        var directory = PeerDirectory(ownAgentID: "self")
        _ = resolve(record(1, timestamp: 1_000), pushed: false, &intake, &directory)
        intake.removed("kitchen", isPaired: { _ in true }, directory: &directory)
        return (intake, directory)
    }

    @Test("a DNS-SD goodbye while the device answers keeps the peer; a pushed withdrawal removes its activity at once; the goodbye stands until liveness finds it gone")
    func goodbyeWhilePushing() {
        var (intake, directory) = afterGoodbye()
        #expect(directory.peer(instance: "kitchen") != nil, "kept: liveness finds it answering")
        _ = resolve(record(2, timestamp: 2_000), pushed: true, &intake, &directory)
        #expect(directory.offered.map(\.id) == [Sample.id(2)], "the push still brings news")
        _ = resolve(record(nil, timestamp: 3_000), pushed: true, &intake, &directory)
        #expect(directory.offered.isEmpty, "withdrawn at once")
        // The pushes did not undo the goodbye: once liveness finds the device gone, it goes.
        #expect(directory.removeAfterGoodbye(deviceID: TestPeer.deviceID).map(\.instanceName) == ["kitchen"])
        #expect(directory.peer(instance: "kitchen") == nil)
    }

    @Test("after a goodbye, DNS-SD resolving the instance again is what undoes it")
    func resolvedAgainAfterGoodbye() {
        var (intake, directory) = afterGoodbye()
        _ = resolve(record(2, timestamp: 2_000), pushed: false, &intake, &directory)
        #expect(directory.removeAfterGoodbye(deviceID: TestPeer.deviceID).isEmpty)
        #expect(directory.offered.map(\.id) == [Sample.id(2)])
    }

    @Test("a pushed record is its device's word without a signature check; DNS-SD bringing the same bytes under the same name is not checked again, a copy under another name is")
    func pushedRecordIsProvenByItsConnection() {
        var intake = AdvertisementCoreTests().intake()
        var directory = PeerDirectory(ownAgentID: "self")
        // Sealed with the peer's key but signed by another identity: only the pinned connection vouches for it.
        let txt = TestPeer.seal(Sample.txt(agent: "peer-kitchen", seq: 1, current: Sample.activity(1)), instanceName: "kitchen",
                                timestamp: 1_000, signer: TestPeer.identity)
        let pushed = AdvertisementTrustTests.service("kitchen", txt)
        #expect(resolve(pushed, pushed: false, &intake, &directory) == [], "over DNS-SD alone it is a forgery")
        #expect(directory.all.isEmpty)
        #expect(resolve(pushed, pushed: true, &intake, &directory) == [.saveSeenNow])
        #expect(directory.peer(instance: "kitchen")?.advertisement.current?.id == Sample.id(1))
        #expect(intake.provenRecords[TestPeer.deviceID]?.instanceName == "kitchen")
        intake.saving(now: t0)
        // The same record by DNS-SD: the device's, taken again without a change (a fresh resolve).
        #expect(!resolve(pushed, pushed: false, &intake, &directory).contains(.saveSeenNow))
        #expect(intake.resolveGenerations[TestPeer.deviceID] == 1, "taken, as a resolve")
        #expect(directory.peer(instance: "kitchen")?.advertisement.current?.id == Sample.id(1))
        // The same bytes under another instance name are checked, and refused.
        #expect(resolve(AdvertisementTrustTests.service("kitchen #2", txt), pushed: false, &intake, &directory) == [])
        #expect(directory.peer(instance: "kitchen #2") == nil)
        // Unpaired: what it proved is forgotten.
        _ = intake.forget(TestPeer.deviceID, now: t0)
        #expect(intake.provenRecords[TestPeer.deviceID] == nil)
    }
}
