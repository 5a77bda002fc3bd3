// An instance Avahi renames on a name conflict ("X" → "X #2"): the advertisement's signature
// binds the instance name, so the agent seals it again for the new name at once, and a peer
// takes nothing sealed for another name, but tells the record a rename left behind from a forgery.
import Foundation
import HandoffCore
import HandoffTrust
import Logging
import Synchronization
import Testing

@testable import HandoffAgent
@testable import HandoffDiscovery

@Suite("A renamed instance: sealed again at once, never taken under a name it is not sealed for")
struct RenamedInstanceTests {
    let t0 = AgentInstant(sinceStart: .seconds(100))
    let peerSenders = [SealedAdvertisement.Sender(deviceID: TestPeer.deviceID, advertisingKey: TestPeer.key, publicKey: TestPeer.peerIdentity.publicKey)]

    static func ownSender(_ agent: Agent) async -> SealedAdvertisement.Sender {
        .init(deviceID: agent.deviceID, advertisingKey: await agent.advertisingKey, publicKey: TestPeer.identity.publicKey)
    }

    static func opening(_ txt: [UInt8], instance: String, senders: [SealedAdvertisement.Sender]) throws -> SealedAdvertisement.Opening {
        SealedAdvertisement.open(try SealedAdvertisement.parse(txtRecord: txt), instanceName: instance, senders: senders)
    }

    static func timestamp(_ opening: SealedAdvertisement.Opening) -> UInt64? {
        if case .opened(let opened) = opening { opened.timestamp } else { nil }
    }

    @Test("the registered name changes: the record is sealed for it at once, newer, and fed to subscribers; the same name changes nothing")
    func resealedForTheNewName() async throws {
        let agent = makeAgent()
        let sender = await Self.ownSender(agent)
        let original = agent.instanceName
        let renamed = "\(original) #2"
        let first = await agent.advertisedTXTRecord
        let firstTimestamp = try #require(Self.timestamp(try Self.opening(first, instance: original, senders: [sender])))

        await agent.registered(as: original)
        #expect(await agent.advertisedTXTRecord == first, "registered under the name it was sealed for: not sealed again")

        await agent.registered(as: renamed)
        let second = await agent.advertisedTXTRecord
        let secondTimestamp = try #require(Self.timestamp(try Self.opening(second, instance: renamed, senders: [sender])))
        #expect(secondTimestamp > firstTimestamp)
        #expect(try Self.opening(second, instance: original, senders: [sender]) == .forged(agent.deviceID))
        #expect(agent.advertisementFeed.current == .init(instanceName: renamed, txtRecord: second))
        #expect(await agent.readableInstanceNames.isSuperset(of: [original, renamed]))

        // What changes later is sealed for the registered name too.
        _ = try await agent.publish(Sample.activity(1))
        let third = await agent.advertisedTXTRecord
        #expect(Self.timestamp(try Self.opening(third, instance: renamed, senders: [sender])) != nil)
    }

    @Test("wide-area DNS-SD is given the new name together with the record sealed for it, and the first name again when it comes back")
    func wideAreaFollowsTheRename() async throws {
        let wideArea = try #require(try WideAreaConfigurationTests().parse(WideAreaConfigurationTests.good).wideArea)
        let agent = makeAgent { $0.wideArea = wideArea }
        let sender = await Self.ownSender(agent)
        let (original, renamed) = (agent.instanceName, "\(agent.instanceName) #2")
        let registrar = try #require(agent.wideAreaRegistrar)
        #expect(registrar.initial == .init(instanceName: original, txtRecord: await agent.advertisedTXTRecord))
        #expect(registrar.settings.hostName == original, "the host name in the zone is kept across renames")
        var advertised = registrar.changes.makeAsyncIterator()

        await agent.registered(as: renamed)
        let moved = try #require(await advertised.next())
        #expect(moved == .init(instanceName: renamed, txtRecord: await agent.advertisedTXTRecord))
        #expect(Self.timestamp(try Self.opening(moved.txtRecord, instance: renamed, senders: [sender])) != nil)

        await agent.registered(as: original)
        let back = try #require(await advertised.next())
        #expect(back.instanceName == original)
        #expect(Self.timestamp(try Self.opening(back.txtRecord, instance: original, senders: [sender])) != nil)
    }

    @Test("the agent's own record under its new name: not its own until sealed for that name, then visible (`handoff doctor`)")
    func ownRecordFollowsTheRename() async throws {
        let agent = makeAgent()
        let renamed = "\(agent.instanceName) #2"
        let stale = await agent.advertisedTXTRecord
        await agent.handle(.resolved(AdvertisementTrustTests.service(renamed, stale)))
        #expect(await !agent.intake.ownInstancesVisible.contains(renamed))

        await agent.registered(as: renamed)
        await agent.handle(.resolved(AdvertisementTrustTests.service(renamed, await agent.advertisedTXTRecord)))
        #expect(await agent.intake.ownInstancesVisible.contains(renamed))
        #expect(await agent.peersJSON() == .array([]), "its own record is no peer")
    }

    @Test("a peer's record sealed for the name its instance had before the rename: nothing taken, logged as a rename, not a forgery")
    func peerRecordLeftByARename() throws {
        let lines = CollectedLines()
        var intake = AdvertisementIntake(ownDeviceID: TestPeer.identity.deviceID, seen: SeenAdvertisements(),
                                         logger: Logger(label: "unit") { _ in CollectingLogHandler(lines: lines) })
        var directory = PeerDirectory(ownAgentID: "self")
        func resolve(_ n: Int, sealedFor: String, on instance: String, timestamp: UInt64, signer: DeviceIdentity = TestPeer.peerIdentity) -> [AdvertisementIntake.Directive] {
            let txt = TestPeer.seal(Sample.txt(agent: "peer-kitchen", seq: UInt64(n), current: Sample.activity(n)), instanceName: sealedFor,
                                    timestamp: timestamp, signer: signer)
            return intake.resolved(AdvertisementTrustTests.service(instance, txt), senders: peerSenders, isPaired: { _ in true },
                                   directory: &directory, now: t0)
        }
        _ = resolve(1, sealedFor: "kitchen", on: "kitchen", timestamp: 1_000)
        #expect(directory.peer(instance: "kitchen") != nil)
        let before = lines.all.count

        // Avahi announced the renamed instance with the record it had: sealed for "kitchen".
        #expect(resolve(2, sealedFor: "kitchen", on: "kitchen #2", timestamp: 2_000).isEmpty)
        #expect(directory.peer(instance: "kitchen #2") == nil)
        #expect(directory.peer(instance: "kitchen")?.advertisement.current?.id == Sample.id(1))
        #expect(Array(lines.levels.dropFirst(before)) == [.info])
        #expect(lines.all.last?.contains("before an Avahi rename") == true)
        #expect(intake.seen.last[TestPeer.deviceID]?.timestamp == 1_000, "its timestamp is not recorded")

        // Not the names a rename cannot have come from, nor another signer: forgeries.
        _ = resolve(3, sealedFor: "kitchen #3", on: "kitchen #2", timestamp: 3_000)
        _ = resolve(3, sealedFor: "kitchen", on: "parlour #2", timestamp: 3_000)
        _ = resolve(3, sealedFor: "kitchen", on: "kitchen #2", timestamp: 3_000, signer: AdvertisementTrustTests.rogue)
        #expect(lines.levels.suffix(3) == [.warning, .warning, .warning])
        #expect(lines.all.suffix(3).allSatisfy { $0.contains("forged") })

        // The record sealed again for the new name is taken, and the device moves to it.
        _ = resolve(4, sealedFor: "kitchen #2", on: "kitchen #2", timestamp: 4_000)
        #expect(directory.peer(instance: "kitchen #2")?.advertisement.current?.id == Sample.id(4))
        #expect(directory.peer(instance: "kitchen") == nil)
        // A second rename: the record sealed for "kitchen #2" shown as "kitchen #3" is no forgery either.
        #expect(resolve(5, sealedFor: "kitchen #2", on: "kitchen #3", timestamp: 5_000).isEmpty)
        #expect(lines.levels.last == .info)
        #expect(lines.all.last?.contains("before an Avahi rename") == true)
    }

    @Test("the renamed record pushed before DNS-SD brings it: the device stays on DNS-SD's route, under its new name")
    func pushedBeforeDNSSD() {
        func directory() -> PeerDirectory {
            var directory = PeerDirectory(ownAgentID: "self")
            _ = directory.update(name: "kitchen", hostTarget: "kitchen.local.", addresses: ["198.18.0.1"], port: 7200,
                                 txtRecord: Sample.txt(agent: "peer-kitchen", seq: 1, current: nil), deviceID: TestPeer.deviceID)
            return directory
        }
        func push(_ directory: inout PeerDirectory, agent: String) -> PeerDirectory.Update {
            directory.update(name: "kitchen #2", hostTarget: "198.18.0.9", addresses: ["198.18.0.9"], port: 7200,
                             txtRecord: Sample.txt(agent: agent, seq: 2, current: Sample.activity(2)), deviceID: TestPeer.deviceID, via: .address)
        }
        var renamed = directory()
        let update = push(&renamed, agent: "peer-kitchen")
        #expect(update == .added)
        #expect(renamed.peer(instance: "kitchen") == nil)
        let moved = renamed.peer(instance: "kitchen #2")
        #expect(moved?.via == .dnsSD && moved?.addresses == ["198.18.0.1"] && moved?.hostTarget == "kitchen.local.")
        #expect(moved?.advertisement.current?.id == Sample.id(2))

        // Another run of the device's agent (a restart) is no rename: reached at its address.
        var restarted = directory()
        _ = push(&restarted, agent: "peer-kitchen-restarted")
        #expect(restarted.peer(instance: "kitchen #2")?.via == .address)
        // Nor is an instance DNS-SD said goodbye for.
        var gone = directory()
        let kept = gone.keepAfterGoodbye(name: "kitchen")
        #expect(kept)
        _ = push(&gone, agent: "peer-kitchen")
        #expect(gone.peer(instance: "kitchen #2")?.via == .address)
    }
}

/// Keeps the level and text of each line logged.
private struct CollectingLogHandler: LogHandler {
    let lines: CollectedLines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { lines.append(event.level, "\(event.message)") }
}

private final class CollectedLines: Sendable {
    private let storage = Mutex<[(Logger.Level, String)]>([])
    func append(_ level: Logger.Level, _ line: String) { storage.withLock { $0.append((level, line)) } }
    var all: [String] { storage.withLock { $0.map(\.1) } }
    var levels: [Logger.Level] { storage.withLock { $0.map(\.0) } }
}
