import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import Testing

@testable import HandoffAgent

/// Two whole agents in one process over the in-memory transport: concurrent fetches from bravo
/// to alpha ride one multiplexed connection, served by alpha's real peer session, and a
/// continue that follows pays no new connection. No sockets.
@Suite("Whole agents in memory: one multiplexed connection per pair", .timeLimit(.minutes(1)))
struct InMemoryMultiplexingTests {
    @Test("40 concurrent fetches and a continue from bravo share one connection to alpha")
    func concurrentFetchesOnOneConnection() async throws {
        let hosts = InMemoryContinueTests.Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            let pool = hosts.bravo.agent.fetchPool
            #expect(pool.idleCount() == 0)
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            #expect(pool.links?.count() == 1)
            #expect(pool.idleCount() == 1, "the one multiplexed connection, no other kept")

            let client = await hosts.bravo.agent.client
            let endpoint = hosts.alpha.listener.endpoint
            let results = await withTaskGroup(of: Result<FetchedActivity, HandoffError>.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        await client.fetchActivity(FetchRequest(activityID: note.identifier, continuationID: UUID()), from: endpoint, peerName: "alpha")
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 40)
            for result in results {
                let fetched = try result.get()
                #expect(fetched.activity.id == note.identifier)
                #expect(fetched.activity.userInfo == ["text": .string("milk, eggs")])
                #expect(fetched.source?.bundleID == NotesApp.manifest.identity.bundleID)
            }
            // Every fetch went on the multiplexed connection: one that had gone another way
            // would have come back to the pool as an idle connection.
            #expect(pool.links?.count() == 1)
            #expect(pool.idleCount() == 1)
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            #expect(pool.idleCount() == 1)
        }
    }

    @Test("alpha closes the multiplexed connection: bravo's next continue opens a new one and succeeds")
    func reconnectAfterDrop() async throws {
        let hosts = InMemoryContinueTests.Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            let pool = hosts.bravo.agent.fetchPool
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            #expect(pool.links?.count() == 1)
            pool.discardAll()
            #expect(await eventually { pool.links?.count() == 0 })
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            #expect(pool.links?.count() == 1)
        }
    }
}
