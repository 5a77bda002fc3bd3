import Foundation
import HandoffConfiguration
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Two whole agents in one process, each with the notes app (HandoffKit) connected to it, over
/// the in-memory transport: the continue flow and each fault that acts on a fetch. No sockets.
@Suite("Whole agents in memory: continuing", .timeLimit(.minutes(1)))
struct InMemoryContinueTests {
    /// alpha (the source, where the editor publishes) and bravo (continuing, with the viewer),
    /// paired, each knowing the other's advertising key.
    struct Hosts {
        let alpha: InMemoryHost
        let bravo: InMemoryHost
        let editor = AppRecorder(savedTitle: "Shopping list (saved)")
        let viewer = AppRecorder()

        /// - Parameters:
        ///   - alphaAddresses: where bravo's trust store says alpha can be reached.
        ///   - alphaLastKnown: where bravo's trust store says alpha was last found.
        ///   - bravoMultiplexes: false: alpha answers bravo as a peer from before multiplexing would.
        init(alpha configureAlpha: (inout AgentConfiguration) -> Void = { _ in }, bravo configureBravo: (inout AgentConfiguration) -> Void = { _ in },
             alphaAddresses: [PeerAddress] = [], alphaLastKnown: [PeerAddress] = [], bravoMultiplexes: Bool = true) {
            let network = InMemoryNetwork()
            let keys = (alpha: AdvertisingKey.random(), bravo: AdvertisingKey.random())
            alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network, paired: [InMemoryHost.device("bravo", advertisingKey: keys.bravo)],
                                 advertisingKey: keys.alpha, configure: configureAlpha)
            var alphaDevice = InMemoryHost.device("alpha", advertisingKey: keys.alpha)
            alphaDevice.addresses = alphaAddresses
            alphaDevice.lastKnownAddresses = alphaLastKnown
            bravo = InMemoryHost("bravo", host: "10.0.0.2", network: network, paired: [alphaDevice],
                                 advertisingKey: keys.bravo, offersMultiplexing: bravoMultiplexes, configure: configureBravo)
        }

        /// Runs both agents with their apps, then `body`.
        func run(_ body: @Sendable (_ editorApp: HandoffApplication) async throws -> Void) async throws {
            let editorApp = alpha.app(NotesApp.manifest, delegate: editor)
            let viewerApp = bravo.app(NotesApp.manifest, delegate: viewer)
            try await InMemoryLab.run([alpha, bravo]) {
                try await withThrowingTaskGroup(of: Void.self) { apps in
                    apps.addTask { try await editorApp.run() }
                    apps.addTask { try await viewerApp.run() }
                    defer { apps.cancelAll() }
                    try await editorApp.waitUntilConnected()
                    try await viewerApp.waitUntilConnected()
                    try await body(editorApp)
                }
            }
        }

        /// The editor makes a note current on alpha; bravo hears of it (as from DNS-SD, unless
        /// `discover` is false).
        func publishNote(_ editorApp: HandoffApplication, needsSave: Bool = false, discover: Bool = true) async throws -> UserActivity {
            let note = UserActivity(activityType: NotesApp.type, application: editorApp)
            note.title = "Shopping list"
            note.userInfo = ["text": .string("milk, eggs")]
            note.needsSave = needsSave
            note.delegate = editor
            try await note.becomeCurrent()
            if discover { await bravo.discover(alpha) }
            return note
        }
    }

    @Test("bravo continues the note alpha's editor published: bravo's viewer gets it, alpha's editor hears it was continued")
    func continueToApp() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            #expect(await hosts.bravo.agent.offered().map(\.id) == [note.identifier])
            let result = try await hosts.bravo.agent.continueActivity(id: note.identifier).get()
            #expect(result.by == "app")
            #expect(result.app == NotesApp.manifest.identity.bundleID)
            #expect(result.peer == "alpha")
            #expect(await eventually { hosts.viewer.events.contains(.didUpdate) })
            #expect(hosts.viewer.events == [
                .willContinue(NotesApp.type),
                .continued(title: "Shopping list", userInfo: ["text": .string("milk, eggs")]),
                .didUpdate,
            ])
            #expect(await eventually { hosts.editor.events.contains(.wasContinued) })
        }
    }

    @Test("an activity that needs saving is saved by alpha's editor before bravo gets it")
    func willSave() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp, needsSave: true)
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            #expect(hosts.editor.events.first == .willSave)
            #expect(hosts.viewer.events.contains(.continued(title: "Shopping list (saved)", userInfo: ["text": .string("milk, eggs")])))
        }
    }

    @Test("a fault set on alpha gives bravo its documented code, nothing is delivered, and the next handoff succeeds",
          arguments: [
              ("refuseConnections", JSONValue.bool(true), 4609),
              ("advertiseGoneData", .bool(true), 4608),
              ("corruptFrame", .bool(true), 4608),
              ("dropAfterBytes", .integer(20), 4608),
          ])
    func fetchFault(name: String, value: JSONValue, code: Int) async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            _ = try await hosts.alpha.agent.changeFaults(set: .object([name: value]), clear: nil).get()
            let failed = await hosts.bravo.agent.continueActivity(id: note.identifier)
            #expect(failed.error?.code.rawValue == code, "\(failed)")
            #expect(await eventually { hosts.viewer.events.contains(.didFail(NotesApp.type, code: code)) })
            #expect(!hosts.viewer.events.contains { if case .continued = $0 { true } else { false } }, "nothing delivered")

            _ = try await hosts.alpha.agent.changeFaults(set: nil, clear: .all).get()
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
        }
    }

    @Test("payloadDelayMs on alpha: bravo gives up at its fetchTimeout, on its clock, with 4610")
    func payloadDelay() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["payloadDelayMs": .integer(3000)]), clear: nil).get()
            let fetchTimeout = await hosts.bravo.agent.configuration.limits.fetchTimeout
            let start = hosts.bravo.clock.now
            async let failed = hosts.bravo.agent.continueActivity(id: note.identifier)
            // alpha holds the payload back on its own clock; bravo's deadline passes on bravo's.
            try await hosts.alpha.clock.waitForSleepers(count: 1)
            try await hosts.bravo.clock.waitForSleeper(until: start.advanced(by: fetchTimeout))
            hosts.bravo.clock.advance(by: fetchTimeout)
            let result = await failed
            #expect(result.error?.code.rawValue == 4610, "\(result)")
            #expect(await eventually { hosts.viewer.events.contains(.didFail(NotesApp.type, code: 4610)) })
            // alpha's session still waits out the delay: let it go.
            hosts.alpha.clock.advance(by: .seconds(3))
            _ = try await hosts.alpha.agent.changeFaults(set: nil, clear: .all).get()
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
        }
    }

    @Test("alpha found unreachable while bravo fetches its note: the continuation fails at once with 4609, not 4610 at fetchTimeout")
    func deviceLostMidFetch() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["payloadDelayMs": .integer(3000)]), clear: nil).get()
            async let failed = hosts.bravo.agent.continueActivity(id: note.identifier)
            // alpha holds the payload back; bravo's liveness then finds alpha gone.
            try await hosts.alpha.clock.waitForSleepers(count: 1)
            await hosts.bravo.agent.setReachability(hosts.alpha.identity.deviceID, reachable: false, lastHeard: nil)
            let result = await failed
            #expect(result.error?.code == .userActivityConnectionUnavailable, "\(result)")
            #expect(result.error?.message.contains("stopped answering") == true, "\(result)")
            #expect(await eventually { hosts.viewer.events.contains(.didFail(NotesApp.type, code: 4609)) })
            // No time passed on bravo's clock: the fetch deadline played no part.
            hosts.alpha.clock.advance(by: .seconds(3))
            _ = try await hosts.alpha.agent.changeFaults(set: nil, clear: .all).get()
            await hosts.bravo.agent.setReachability(hosts.alpha.identity.deviceID, reachable: true, lastHeard: nil)
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
        }
    }

    @Test("willSaveDelayMs on alpha: its editor saves too late, bravo gets 4610")
    func slowWillSave() async throws {
        // alpha holds the save back on its own clock, at most its fetchTimeout: a delay past it is 4610.
        let hosts = Hosts(alpha: { $0.limits.fetchTimeout = .milliseconds(20) })
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp, needsSave: true)
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["willSaveDelayMs": .integer(3000)]), clear: nil).get()
            let start = hosts.alpha.clock.now
            async let failed = hosts.bravo.agent.continueActivity(id: note.identifier)
            try await hosts.alpha.clock.waitForSleeper(until: start.advanced(by: .milliseconds(20)))
            hosts.alpha.clock.advance(by: .milliseconds(20))
            let result = await failed
            #expect(result.error?.code.rawValue == 4610, "\(result)")
            #expect(!hosts.viewer.events.contains { if case .continued = $0 { true } else { false } }, "nothing delivered")
        }
    }
}
