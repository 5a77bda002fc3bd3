import Foundation
import HandoffConfiguration
import HandoffCore
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// A reload (SIGHUP's ``Agent/reload(_:launchable:)``) changes what the running agent does, with
/// two whole agents in memory: the next continuation uses the new handlers, limits and faults.
@Suite("Whole agents in memory: reloading the configuration", .timeLimit(.minutes(1)))
struct InMemoryReloadTests {
    /// alpha offers a note (no app: bravo hands it to its handlers), bravo continues it.
    struct Hosts {
        let alpha: InMemoryHost
        let bravo: InMemoryHost

        init() {
            let network = InMemoryNetwork()
            let keys = (alpha: AdvertisingKey.random(), bravo: AdvertisingKey.random())
            alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network, paired: [InMemoryHost.device("bravo", advertisingKey: keys.bravo)],
                                 advertisingKey: keys.alpha)
            bravo = InMemoryHost("bravo", host: "10.0.0.2", network: network, paired: [InMemoryHost.device("alpha", advertisingKey: keys.alpha)],
                                 advertisingKey: keys.bravo) { $0.urlOpener = ["/bin/false"] }
        }

        /// Publishes the note on alpha; bravo hears of it. Returns its ID.
        func offerNote() async throws -> UUID {
            let id = try await alpha.agent.publish(Sample.activity(1, title: "Notes"))
            await bravo.discover(alpha)
            #expect(await eventually { await bravo.agent.offered().map(\.id) == [id] })
            return id
        }

        /// bravo's configuration as it is, changed by `change`, reloaded on bravo.
        func reloadBravo(_ change: (inout AgentConfiguration) -> Void) async -> ConfigurationChange {
            var configuration = bravo.agent.configuration
            change(&configuration)
            return await bravo.agent.reload(configuration, launchable: [])
        }
    }

    @Test("a handler added by a reload takes the next continuation; a lower maxUserInfoBytes then refuses it with 4611")
    func handlersAndLimits() async throws {
        let hosts = Hosts()
        try await InMemoryLab.run([hosts.alpha, hosts.bravo]) {
            let id = try await hosts.offerNote()
            let before = await hosts.bravo.agent.continueActivity(id: id)
            #expect(before.error?.code.rawValue == 4608, "no handler yet: \(before)")

            let handler = AgentConfiguration.Handler(activityTypes: [Sample.notesEdit.rawValue], command: ["/bin/true"])
            let added = await hosts.reloadBravo { $0.handlers = [handler] }
            #expect(added.live.map(\.name) == ["handlers"])
            let handled = try await hosts.bravo.agent.continueActivity(id: id).get()
            #expect(handled.by == "handler")

            let limited = await hosts.reloadBravo { $0.limits.maxUserInfoBytes = 4 }
            #expect(limited.live.map(\.name) == ["limits.maxUserInfoBytes"])
            let refused = await hosts.bravo.agent.continueActivity(id: id)
            #expect(refused.error?.code.rawValue == 4611, "\(refused)")
            #expect(refused.error?.message.contains("(4)") == true, "\(refused)")
        }
    }

    @Test("a fetchTimeout changed by a reload is the next fetch's deadline on bravo's clock")
    func fetchTimeout() async throws {
        let hosts = Hosts()
        try await InMemoryLab.run([hosts.alpha, hosts.bravo]) {
            let id = try await hosts.offerNote()
            let change = await hosts.reloadBravo { $0.limits.fetchTimeout = .milliseconds(1500) }
            #expect(change.live.map(\.name) == ["limits.fetchTimeout"])
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["payloadDelayMs": .integer(3000)]), clear: nil).get()
            let start = hosts.bravo.clock.now
            async let failed = hosts.bravo.agent.continueActivity(id: id)
            try await hosts.alpha.clock.waitForSleepers(count: 1)
            try await hosts.bravo.clock.waitForSleeper(until: start.advanced(by: .milliseconds(1500)))
            hosts.bravo.clock.advance(by: .milliseconds(1500))
            let result = await failed
            #expect(result.error?.code.rawValue == 4610, "\(result)")
            #expect(result.error?.message.contains("1.5") == true, "\(result)")
            hosts.alpha.clock.advance(by: .seconds(3))
        }
    }

    @Test("faults set by a reload act on the next fetch; a reload whose faults did not change keeps `handoff fault`'s")
    func faults() async throws {
        let hosts = Hosts()
        try await InMemoryLab.run([hosts.alpha, hosts.bravo]) {
            let id = try await hosts.offerNote()
            var configuration = hosts.alpha.agent.configuration
            configuration.faults.set(.refuseConnections, flag: true)
            #expect(await hosts.alpha.agent.reload(configuration, launchable: []).live.map(\.name) == ["faults"])
            #expect(await hosts.bravo.agent.continueActivity(id: id).error?.code.rawValue == 4609)

            _ = try await hosts.alpha.agent.changeFaults(set: nil, clear: .all).get()
            #expect(await hosts.alpha.agent.reload(configuration, launchable: []).isEmpty)
            #expect(await hosts.alpha.agent.faults == FaultPlan(), "the file's faults did not change: handoff fault's clearing stays")
        }
    }

    @Test("a port changed by a reload needs a restart: the agent keeps its running port and its other keys still change")
    func restartKeysKept() async throws {
        let hosts = Hosts()
        let change = await hosts.reloadBravo {
            $0.port = 52200
            $0.limits.maxInboxBytesPerDevice = 1000
            $0.logLevel = "debug"
        }
        #expect(change.needingRestart.map(\.description) == ["port (52123 -> 52200)"])
        #expect(change.live.map(\.name) == ["logLevel", "limits.maxInboxBytesPerDevice"])
        #expect(hosts.bravo.agent.configuration.port == AgentConfiguration.defaultPort)
        #expect(hosts.bravo.agent.inboxQuota.limit == 1000)
        #expect(hosts.bravo.agent.liveConfiguration.logLevel == .debug)
    }
}
