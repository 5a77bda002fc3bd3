import Foundation
import HandoffCore
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Saved activities and search between whole agents in memory: what `handoff publish
/// --searchable` saves, `handoff search` finds here and, with `--devices all`, on paired devices.
@Suite("Whole agents in memory: saved activities and search", .timeLimit(.minutes(1)))
struct InMemorySearchTests {
    static func searchable(_ title: String, persistentID: String? = nil, keywords: Set<String> = []) -> Activity {
        var activity = Sample.activity(1, title: title)
        activity.id = UUID()
        activity.isEligibleForSearch = true
        activity.persistentIdentifier = persistentID
        activity.keywords = keywords
        return activity
    }

    @Test("a searchable activity is found after it is resigned; one that is not searchable never is")
    func savedOutlivesResign() async throws {
        let alpha = InMemoryHost("alpha", host: "10.0.0.1", network: InMemoryNetwork())
        try await InMemoryLab.run([alpha]) {
            let kept = Self.searchable("Quarterly budget", persistentID: "doc-1", keywords: ["finance"])
            _ = try await ControlSession.execute(.publish(kept), agent: alpha.agent).get()
            _ = try await ControlSession.execute(.publish(Sample.activity(2, title: "Quarterly plan, not searchable")), agent: alpha.agent).get()
            _ = try await ControlSession.execute(.resign(id: kept.id), agent: alpha.agent).get()
            let found = SearchResult(json: try await ControlSession.execute(.search(query: "quarterly", devices: .local, limit: 20), agent: alpha.agent).get())
            #expect(found.results.map(\.title) == ["Quarterly budget"])
            #expect(found.results.first?.persistentIdentifier == "doc-1")
            #expect(found.results.first?.device == "alpha")
            let byKeyword = SearchResult(json: try await ControlSession.execute(.search(query: "fin", devices: .local, limit: 20), agent: alpha.agent).get())
            #expect(byKeyword.results.count == 1)

            let deleted = DeleteSavedResult(json: try await ControlSession.execute(.deleteSaved(.persistentIdentifiers(["doc-1"])), agent: alpha.agent).get())
            #expect(deleted.deleted == 1)
            let after = SearchResult(json: try await ControlSession.execute(.search(query: "quarterly", devices: .local, limit: 20), agent: alpha.agent).get())
            #expect(after.results.isEmpty)
        }
    }

    @Test("--devices all: bravo finds alpha's saved activity, named by the name bravo stored when pairing; a query with no word is a clear error")
    func searchesPairedDevices() async throws {
        let (alpha, bravo) = InMemoryHost.pairedAlphaAndBravo(on: InMemoryNetwork())
        try await InMemoryLab.run([alpha, bravo]) {
            _ = try await ControlSession.execute(.publish(Self.searchable("Trip to Lisbon", persistentID: "trip")), agent: alpha.agent).get()
            _ = try await ControlSession.execute(.publish(Self.searchable("Lisbon restaurants")), agent: bravo.agent).get()
            await bravo.discover(alpha)

            let local = SearchResult(json: try await ControlSession.execute(.search(query: "lisbon", devices: .local, limit: 20), agent: bravo.agent).get())
            #expect(local.results.map(\.device) == ["bravo"])
            let everywhere = SearchResult(json: try await ControlSession.execute(.search(query: "lisbon", devices: .all, limit: 20), agent: bravo.agent).get())
            #expect(Set(everywhere.results.map { "\($0.device): \($0.title ?? "")" }) == ["bravo: Lisbon restaurants", "alpha: Trip to Lisbon"])
            #expect(everywhere.unreachable.isEmpty)
            #expect(everywhere.results.first { $0.device == "alpha" }?.persistentIdentifier == "trip")

            let noWords = await ControlSession.execute(.search(query: "**", devices: .all, limit: 20), agent: bravo.agent)
            #expect(throws: HandoffError.self) { try noWords.get() }
            #expect("\(noWords)".contains("no word to search for"))
        }
    }
}
