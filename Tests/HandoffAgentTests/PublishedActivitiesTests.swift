import Foundation
import HandoffConfiguration
import HandoffCore
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Activities published with `handoff publish` outlive an agent restart
/// (``PublishedActivitiesFile``); apps' activities and clipboard items do not.
@Suite("Published activities kept across restarts")
struct PublishedActivitiesTests {
    let now = Sample.now
    let app = ActivityStore.Owner(identity: AppIdentity(bundleID: "com.example.notes", teamID: "TEAM"), connectionID: UUID())

    /// A fresh state directory, mode 0700 as the agent makes it.
    static func stateDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-kept-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// An agent on `directory`, its wall clock at `now`.
    static func agent(_ directory: String, now: Date = Sample.now) throws -> Agent {
        let security = try AgentSecurity(identity: TestPeer.identity, trust: TrustStore(), stateDirectory: directory)
        var configuration = AgentConfiguration(name: "unit-host", socketPath: "/tmp/handoff-unit-unused.sock")
        configuration.serviceType = "_handoffunit._tcp"
        return Agent(configuration: configuration, port: 7123,
                     transport: UnitTestTransport(pinned: RefusingConnector(), configuration: configuration, security: security),
                     logger: quietLogger, security: security, wallClock: { now })
    }

    @Test("only activities published without an app are kept, clipboard items excepted, oldest first")
    func whichAreKept() {
        var store = ActivityStore()
        let cli1 = Sample.activity(1), byApp = Sample.activity(2), cli3 = Sample.activity(3)
        var clip = Sample.activity(4)
        clip.activityType = .clipboard
        store.publish(cli1)
        store.publish(byApp, owner: app)
        store.publish(cli3)
        store.publish(clip)
        #expect(PublishedActivitiesFile.kept(in: store) == [cli1, cli3])
    }

    @Test("the file keeps each activity whole, with its ID, in slots of mode 0600; none empties it")
    func roundTrip() throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = PublishedActivitiesFile(stateDirectory: directory)
        var rich = Sample.activity(1, expiresIn: 3600)
        rich.userInfo = ["text": .string("milk"), "when": .date(now), "bytes": .data(Data([1, 2, 3])), "list": .array([.integer(1), .bool(true)])]
        rich.webpageURL = URL(string: "https://example.com/a?b=c")
        let activities = [rich, Sample.activity(2)]
        try file.save(activities)
        #expect(file.load(now: now) == .activities(activities))
        let mode = (try FileManager.default.attributesOfItem(atPath: file.slotPaths[0])[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)
        try file.save([])
        #expect(file.load(now: now) == .activities([]))
        #expect(PublishedActivitiesFile(stateDirectory: directory).load(now: now) == .activities([]), "read anew")
        try file.save(activities)
        #expect(PublishedActivitiesFile(stateDirectory: directory).load(now: now) == .activities(activities))
        // The state directory removed while the agent runs: the next write makes it again, mode 0700.
        try FileManager.default.removeItem(atPath: directory)
        try file.save(activities)
        #expect(PublishedActivitiesFile(stateDirectory: directory).load(now: now) == .activities(activities))
        #expect((try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    @Test("expired activities are dropped when loading")
    func dropsExpired() throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = PublishedActivitiesFile(stateDirectory: directory)
        let lasting = Sample.activity(1, expiresIn: 3600), expired = Sample.activity(2, expiresIn: 60), forever = Sample.activity(3)
        try file.save([lasting, expired, forever])
        #expect(file.load(now: now.addingTimeInterval(120)) == .activities([lasting, forever]))
    }

    @Test("a corrupt slot, or an empty one (what a power loss may leave, since the slots are not fsynced), is moved aside, not deleted, and nothing is loaded")
    func corruptMovedAside() throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = PublishedActivitiesFile(stateDirectory: directory)
        let slot = file.slotPaths[0]
        // Bytes without a slot header, then whole slots whose content this build cannot read.
        let raw = ["", "{not json"], wrapped = [#"{"version": 9, "activities": []}"#, #"{"version": 1, "activities": [{"id": "x"}]}"#]
        for (bytes, wrap) in raw.map({ ($0, false) }) + wrapped.map({ ($0, true) }) {
            if wrap {
                try AlternatingFile(path: file.path).write(Array(bytes.utf8))
            } else {
                FileManager.default.createFile(atPath: slot, contents: Data(bytes.utf8), attributes: [.posixPermissions: 0o600])
            }
            let written = FileManager.default.contents(atPath: slot)
            guard case .unreadable(_, let movedTo) = PublishedActivitiesFile(stateDirectory: directory).load(now: now) else {
                Issue.record("\(bytes) was not refused and moved")
                continue
            }
            #expect(movedTo == ["\(slot).unreadable-\(Int64(now.timeIntervalSince1970))"])
            #expect(FileManager.default.contents(atPath: movedTo[0]) == written)
            #expect(!FileManager.default.fileExists(atPath: slot))
            try FileManager.default.removeItem(atPath: movedTo[0])
        }
    }

    @Test("the single file earlier versions kept is read while no slot exists, and removed once one is written")
    func legacyFileRead() throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let legacy = directory + "/" + PublishedActivitiesFile.legacyFileName
        let activities = [Sample.activity(1)]
        FileManager.default.createFile(atPath: legacy, contents: Data(PublishedActivitiesFile.encode(activities)), attributes: [.posixPermissions: 0o600])
        let file = PublishedActivitiesFile(stateDirectory: directory)
        #expect(file.load(now: now) == .activities(activities))
        try file.save(activities + [Sample.activity(2)])
        #expect(!FileManager.default.fileExists(atPath: legacy))
        #expect(PublishedActivitiesFile(stateDirectory: directory).load(now: now) == .activities(activities + [Sample.activity(2)]))
    }

    @Test("an agent started again holds the CLI's activities with their IDs, not the apps', and the newest is current")
    func agentRestart() async throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Self.agent(directory)
        let older = Sample.activity(1, title: "older"), newer = Sample.activity(2, title: "newer"), byApp = Sample.activity(3)
        let gone = Sample.activity(4, expiresIn: 60)
        for activity in [older, gone, newer] { _ = try await first.publish(activity) }
        _ = try await first.publish(byApp, owner: app)

        let second = try Self.agent(directory, now: now.addingTimeInterval(120))
        #expect(await second.lookUp(id: older.id) == older)
        #expect(await second.lookUp(id: newer.id) == newer)
        #expect(await second.lookUp(id: byApp.id) == nil, "an app publishes its own again")
        #expect(await second.lookUp(id: gone.id) == nil, "expired while the agent was down")
        #expect(await second.store.current(at: now.addingTimeInterval(120)) == newer)
    }

    @Test("resign and expiry remove an activity from the file")
    func resignAndExpiryRemove() async throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try Self.agent(directory)
        let kept = Sample.activity(1), resigned = Sample.activity(2), expiring = Sample.activity(3, expiresIn: 60)
        for activity in [kept, resigned, expiring] { _ = try await agent.publish(activity) }
        try await agent.resign(id: resigned.id)
        await agent.expireActivities(now: now.addingTimeInterval(120))
        #expect(agent.publishedFile?.load(now: now) == .activities([kept]))
        try await agent.resign(id: kept.id)
        #expect(PublishedActivitiesFile(stateDirectory: directory).load(now: now) == .activities([]))
    }

    @Test("an agent whose file is corrupt starts with no activity, the file moved aside, and keeps new ones")
    func agentWithCorruptFile() async throws {
        let directory = try Self.stateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = PublishedActivitiesFile(stateDirectory: directory)
        FileManager.default.createFile(atPath: file.slotPaths[1], contents: Data("garbage".utf8), attributes: [.posixPermissions: 0o600])
        let agent = try Self.agent(directory)
        #expect(await agent.store.all.isEmpty)
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(PublishedActivitiesFile.fileName + ".1.unreadable-") }
        #expect(aside.count == 1)
        _ = try await agent.publish(Sample.activity(1))
        #expect(file.load(now: now) == .activities([Sample.activity(1)]))
    }
}
