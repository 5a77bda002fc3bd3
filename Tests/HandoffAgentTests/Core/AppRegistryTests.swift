import Foundation
import HandoffConfiguration
import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("AppRegistry")
struct AppRegistryTests {
    static let notes = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Sample.notesEdit])
    static let notesToo = AppManifest(bundleID: "aaa.notes", teamID: "TEAM1", activityTypes: [Sample.notesEdit])
    static let maps = AppManifest(bundleID: "com.example.maps", teamID: "TEAM2", activityTypes: [Sample.mapsView])
    let t0 = AgentInstant(sinceStart: .zero)

    static func routed(_ route: AppRegistry.Route) -> String {
        switch route {
        case .running(_, let manifest): return "running " + manifest.identity.bundleID
        case .launch(let app): return "launch " + app.manifest.identity.bundleID
        case .none: return "none"
        }
    }

    @Test("an activity goes to a registered app of its type and team, the first by bundle ID; else one to launch; else none")
    func routing() throws {
        var registry = AppRegistry(launchable: [LaunchableApp(manifest: Self.maps, launch: ["/usr/bin/maps"])])
        #expect(Self.routed(registry.route(Sample.notesEdit, fromTeam: "TEAM1")) == "none")
        #expect(Self.routed(registry.route(Sample.mapsView, fromTeam: "TEAM2")) == "launch com.example.maps")
        #expect(Self.routed(registry.route(Sample.mapsView, fromTeam: "TEAM9")) == "none", "another team's activity")
        _ = try registry.register(Self.notes, on: UUID()).get()
        _ = try registry.register(Self.notesToo, on: UUID()).get()
        #expect(Self.routed(registry.route(Sample.notesEdit, fromTeam: "TEAM1")) == "running aaa.notes")
    }

    @Test("registering resumes the callers waiting for that app; one already registered needs no wait")
    func registrationWaiters() throws {
        var registry = AppRegistry(launchable: [])
        let waiter = UUID()
        let r1 = registry.awaitRegistration(of: "com.example.notes", by: waiter)
        #expect(r1)
        let r2 = registry.register(Self.notes, on: UUID())
        #expect(try r2.get() == [waiter])
        let r3 = registry.awaitRegistration(of: "com.example.notes", by: UUID())
        #expect(!r3)
        let late = UUID()
        let r4 = registry.awaitRegistration(of: "com.example.maps", by: late)
        #expect(r4)
        let r5 = registry.stopWaiting(for: "com.example.maps")
        #expect(r5 == [late], "the launcher's time is up: every waiter stops")
    }

    @Test("a bundle ID runs on one connection at a time, and a connection is one app")
    func ownership() throws {
        var registry = AppRegistry(launchable: [])
        let first = UUID(), second = UUID()
        _ = try registry.register(Self.notes, on: first).get()
        #expect(throws: HandoffError.self) { try registry.register(Self.notes, on: second).get() }
        #expect(throws: HandoffError.self) { try registry.register(Self.maps, on: first).get() }
        let r6 = registry.disconnected(first)
        #expect(r6.app == Self.notes)
        _ = try registry.register(Self.notes, on: second).get()
        #expect(registry.connection(of: "com.example.notes") == second)
    }

    @Test("a reply is taken only from the connection its event went to; a closed connection's events get no answer")
    func replies() {
        var registry = AppRegistry(launchable: [])
        let connection = UUID(), other = UUID(), reply = UUID(), unanswered = UUID()
        registry.expectReply(reply, from: connection)
        registry.expectReply(unanswered, from: connection)
        let r7 = registry.replyArrived(reply, over: other)
        #expect(r7 != nil)
        let r8 = registry.replyArrived(reply, over: connection)
        #expect(r8 == nil)
        let r9 = registry.disconnected(connection)
        #expect(r9.unanswered == [unanswered])
    }

    @Test("launches are single-flight per app and rate-limited per device, on the agent's instants")
    func launches() {
        var registry = AppRegistry(launchable: [])
        let r10 = registry.requestLaunch("com.example.notes", forDevice: nil, now: t0)
        #expect(r10 == .launch)
        let r11 = registry.requestLaunch("com.example.notes", forDevice: nil, now: t0)
        #expect(r11 == .join)
        registry.launchEnded("com.example.notes")
        for _ in 0..<3 {
            let r12 = registry.requestLaunch("com.example.maps", forDevice: "dev", now: t0)
            #expect(r12 == .launch)
            registry.launchEnded("com.example.maps")
        }
        guard case .refuse = registry.requestLaunch("com.example.maps", forDevice: "dev", now: t0) else {
            Issue.record("a fourth launch at once must be refused")
            return
        }
        let r13 = registry.requestLaunch("com.example.maps", forDevice: "dev", now: t0.advanced(by: .seconds(20)))
        #expect(r13 == .launch)
    }
}
