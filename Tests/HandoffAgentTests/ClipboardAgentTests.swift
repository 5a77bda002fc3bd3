import Foundation
import HandoffCore
import HandoffTransport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Frames from an array, as a control connection's inbound would give them.
private struct FramesIterator: AsyncIteratorProtocol {
    var frames: [Frame]
    mutating func next() async throws -> Frame? { frames.isEmpty ? nil : frames.removeFirst() }
}

@Suite("Agent: the clipboard item (no network)", .timeLimit(.minutes(1)))
struct ClipboardAgentTests {
    func copy(_ bytes: [UInt8], on agent: Agent, size: Int? = nil) async -> Result<JSONValue, HandoffError> {
        var frames = FramesIterator(frames: [Frame(kind: .streamData, payload: bytes), ControlByteStream.end])
        return await ClipboardControlSession.receiveCopy(mimeType: "text/plain", size: size, inbound: &frames, agent: agent)
    }

    /// Removes the directory an agent without a state directory spools in (under TMPDIR).
    func removeSpool(of agent: Agent) {
        try? FileManager.default.removeItem(atPath: PrivateDirectory.parent(of: agent.clipboardSpool.directory))
    }

    func spooled(_ agent: Agent) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: agent.clipboardSpool.directory)) ?? []
    }

    @Test("publish refuses the reserved clipboard type")
    func reservedType() async {
        let agent = makeAgent()
        defer { removeSpool(of: agent) }
        await #expect(throws: HandoffError.self) { try await agent.publish(Activity(activityType: .clipboard)) }
    }

    @Test("a copy is offered beside the current activity; a newer copy replaces it and deletes its bytes")
    func replace() async throws {
        let agent = makeAgent()
        defer { removeSpool(of: agent) }
        let note = try await agent.publish(Activity(activityType: Sample.notesEdit, title: "Note"))
        let first = CopyResult(json: try await copy(Array("one".utf8), on: agent).get())
        #expect(first.item == ClipboardItemInfo(mimeType: "text/plain", size: 3, sha256: ContentDigest.hex(of: Array("one".utf8))))
        #expect(spooled(agent) == [first.id!.uuidString])
        let second = CopyResult(json: try await copy(Array("two!".utf8), on: agent).get())
        #expect(spooled(agent) == [second.id!.uuidString])
        let store = await agent.store
        #expect(store.current(at: Date())?.id == note)
        #expect(store.clipboardItem(at: Date())?.id == second.id)
        #expect(store.all.filter { $0.activityType.isClipboard }.count == 1)
        // Only the newest item is served.
        #expect(await agent.clipboardItemToServe(first.id!).error != nil)
        guard case .success(let (item, fd)) = await agent.clipboardItemToServe(second.id!) else { Issue.record("not served"); return }
        close(fd)
        #expect(item.size == 4)
    }

    @Test("an item over clipboard.maxBytes is refused and the item offered before stays")
    func tooLarge() async throws {
        let agent = makeAgent { $0.clipboard.maxBytes = 4 }
        defer { removeSpool(of: agent) }
        let kept = CopyResult(json: try await copy([1, 2, 3], on: agent).get())
        let announced = await copy([1, 2, 3, 4, 5], on: agent, size: 5)
        #expect(announced.error?.code == .userActivityHandoffUserInfoTooLarge)
        #expect(announced.error?.message.contains("clipboard.maxBytes") == true)
        let streamed = await copy([1, 2, 3, 4, 5], on: agent)
        #expect(streamed.error?.code == .userActivityHandoffUserInfoTooLarge)
        #expect(spooled(agent) == [kept.id!.uuidString])
        #expect(await agent.store.clipboardItem(at: Date())?.id == kept.id)
    }

    @Test("an item expires after clipboard.expiry, and its bytes go with it")
    func expiry() async throws {
        let agent = makeAgent { $0.clipboard.expiry = .seconds(120) }
        defer { removeSpool(of: agent) }
        let item = CopyResult(json: try await copy([9], on: agent).get())
        await agent.expireActivities(now: Date().addingTimeInterval(100))
        #expect(spooled(agent).count == 1)
        await agent.expireActivities(now: Date().addingTimeInterval(121))
        #expect(spooled(agent).isEmpty)
        #expect(await agent.clipboardItemToServe(item.id!).error?.message.contains("expired or was replaced") == true)
    }

    @Test("paste without an item says what to do")
    func nothingToPaste() async {
        let agent = makeAgent()
        defer { removeSpool(of: agent) }
        let none = await agent.clipboardItemToPaste(from: nil)
        #expect(none.error?.message == "no clipboard item from a paired device in the last two minutes; run `handoff copy` on the other host")
        #expect(await agent.clipboardItemToPaste(from: "h9").error?.code == .userActivityConnectionUnavailable)
    }
}
