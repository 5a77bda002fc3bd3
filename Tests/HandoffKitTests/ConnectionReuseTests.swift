import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// Kept connections between two real agents in this process (TLS 1.3 on loopback): reuse, and
/// the checks the source makes again for each fetch on a kept connection.
@Suite("Connection reuse between two real agents", .timeLimit(.minutes(1)))
struct ConnectionReuseTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!

    /// A source "src" holding one activity (published without an app) and a continuing agent
    /// "dst" whose handler is `true`.
    func withTwoAgents(_ body: @Sendable (AgentHarness, AgentHarness, UUID) async throws -> Void) async throws {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst") {
            $0.handlers = [.init(activityTypes: [Self.notes.rawValue], command: ["true"])]
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            let id = try await source.agent.publish(Activity(activityType: Self.notes, title: "Groceries", userInfo: ["n": .integer(1)]))
            await source.introduce(to: destination)
            try await body(source, destination, id)
            group.cancelAll()
        }
    }

    @Test("the second continuation runs on the connection the first one kept")
    func reuse() async throws {
        try await withTwoAgents { source, destination, id in
            #expect(destination.agent.fetchPool.idleCount() == 0)
            _ = try await destination.agent.continueActivity(id: id).get()
            #expect(destination.agent.fetchPool.idleCount() == 1)
            _ = try await destination.agent.continueActivity(id: id).get()
            #expect(destination.agent.fetchPool.idleCount() == 1, "the same connection went back, no second one")
        }
    }

    @Test("a device unpaired while its connection is kept cannot fetch on it: 4609")
    func unpairedOnKeptConnection() async throws {
        try await withTwoAgents { source, destination, id in
            _ = try await destination.agent.continueActivity(id: id).get()
            #expect(destination.agent.fetchPool.idleCount() == 1)
            // The source closes the device's connections when it unpairs it (and would refuse a
            // fetch on one still open): the kept one is found closed, the new one refused.
            _ = try await source.agent.trustRemove(destination.agent.deviceID)
            let error = try #require(await destination.agent.continueActivity(id: id).error)
            #expect(error.code == .userActivityConnectionUnavailable)
            #expect(error.message.contains("paired"), "\(error.message)")
            #expect(destination.agent.fetchPool.idleCount() == 0)
        }
    }

    @Test("the refuseConnections fault holds on a kept connection: 4609, then reuse again once cleared")
    func refuseOnKeptConnection() async throws {
        try await withTwoAgents { source, destination, id in
            _ = try await destination.agent.continueActivity(id: id).get()
            _ = await source.agent.changeFaults(set: .object(["refuseConnections": .bool(true)]), clear: nil)
            let error = try #require(await destination.agent.continueActivity(id: id).error)
            #expect(error.code == .userActivityConnectionUnavailable)
            _ = await source.agent.changeFaults(set: nil, clear: .named(["refuseConnections"]))
            _ = try await destination.agent.continueActivity(id: id).get()
            #expect(destination.agent.fetchPool.idleCount() == 1)
        }
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    fileprivate var error: Failure? { if case .failure(let e) = self { e } else { nil } }
}
