import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// An app that records what it is asked to open.
final class OpeningDelegate: HandoffApplicationDelegate {
    let log = CallLog()
    /// What the app answers: true, it handled what it was sent.
    let handles: Bool
    init(handles: Bool = true) { self.handles = handles }
    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }
    func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool {
        log.add("\(url.absoluteString)|\(sourceApplication ?? "-")|\(annotation.map { $0.json.serialized } ?? "-")")
        return handles
    }
}

@Suite("Open URL between hosts", .timeLimit(.minutes(1)))
struct OpenURLTests {
    static let manifest = AppManifest(bundleID: "com.example.viewer", teamID: "TEAM1", activityTypes: [])

    func withHosts(inboxQuota: Int = 256 << 20, appHandles: Bool = true, _ body: @Sendable (AgentHarness, AgentHarness, String, OpeningDelegate) async throws -> Void) async throws {
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString.prefix(8))").path
        let sender = try await AgentHarness.start(name: "sender")
        let receiver = try await AgentHarness.start(name: "receiver") {
            $0.inboxDirectory = inbox
            $0.limits.maxOpenFileBytes = 1 << 20
            $0.limits.maxInboxBytesPerDevice = inboxQuota
        }
        let viewer = OpeningDelegate(handles: appHandles)
        let app = HandoffApplication(manifest: Self.manifest, socketPath: receiver.socketPath, delegate: viewer)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sender.run() }
            group.addTask { try await receiver.run() }
            group.addTask { try await app.run() }
            try await app.waitUntilConnected()
            await receiver.introduce(to: sender)
            try await body(sender, receiver, inbox, viewer)
            group.cancelAll()
        }
        try? FileManager.default.removeItem(atPath: inbox)
    }

    @Test("a file lands read-only in the app's Inbox under a sanitised name, and the app opens it")
    func fileToInbox() async throws {
        try await withHosts { sender, _, inbox, viewer in
            let bytes = Array((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let request = OpenRequest(bundleID: Self.manifest.identity.bundleID, fileName: "../../../etc/passwd", fileSize: bytes.count,
                                      sourceApplication: "com.example.sender", annotation: .dictionary(["page": .integer(3)]))
            let result = try await sender.agent.open(request, file: bytes, onPeer: "receiver").get()
            #expect(result.handled == true)
            let path = "\(inbox)/com.example.viewer/Inbox/passwd"
            #expect(viewer.log.all == ["file://\(path)|com.example.sender|{\"page\":3}"])
            #expect(FileManager.default.contents(atPath: path).map(Array.init) == bytes)
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o400, "the app may read and delete the file, not write it")

            // A transfer shorter than announced keeps nothing.
            let short = await sender.agent.open(request, file: [1, 2, 3], onPeer: "receiver")
            #expect((try? short.get()) == nil)
            #expect(!FileManager.default.fileExists(atPath: "\(inbox)/com.example.viewer/Inbox/passwd (2)"))

            // The same name again does not replace the first file.
            var again = request
            again.fileSize = 3
            _ = try await sender.agent.open(again, file: [1, 2, 3], onPeer: "receiver").get()
            #expect(FileManager.default.contents(atPath: "\(inbox)/com.example.viewer/Inbox/passwd (2)").map(Array.init) == [1, 2, 3])
            #expect(FileManager.default.contents(atPath: path).map(Array.init) == bytes)
        }
    }

    @Test("a URL is opened with its annotation")
    func url() async throws {
        try await withHosts { sender, _, _, viewer in
            let request = OpenRequest(bundleID: Self.manifest.identity.bundleID, url: URL(string: "https://example.com/a?b=1")!)
            let result = try await sender.agent.open(request, file: [], onPeer: "receiver").get()
            #expect(result.handled == true)
            #expect(viewer.log.all == ["https://example.com/a?b=1|-|-"])
        }
    }

    @Test("a peer cannot hand an app a file: URL (of any spelling) or a URL without a scheme; the app is not called",
          arguments: ["file:///etc/passwd", "FILE:///home/victim/.ssh/id_ed25519", "file://localhost/etc/shadow", "File:/etc/hosts"])
    func fileURLRefused(_ text: String) async throws {
        try await withHosts { sender, _, _, viewer in
            let request = OpenRequest(bundleID: Self.manifest.identity.bundleID, url: URL(string: text)!)
            let result = await sender.agent.open(request, file: [], onPeer: "receiver")
            guard case .failure(let error) = result else { Issue.record("\(text) was delivered: \(result)"); return }
            #expect(error.code == .userActivityHandoffFailed)
            #expect(error.message.contains("file URLs are not accepted"), "\(error.message)")
            #expect(viewer.log.all.isEmpty)
        }
    }

    @Test("a file the app declines is not kept in its Inbox")
    func declinedFileDeleted() async throws {
        try await withHosts(appHandles: false) { sender, _, inbox, viewer in
            let request = OpenRequest(bundleID: Self.manifest.identity.bundleID, fileName: "declined.txt", fileSize: 5)
            let result = try await sender.agent.open(request, file: Array("hello".utf8), onPeer: "receiver").get()
            #expect(result.handled == false)
            #expect(viewer.log.all.count == 1, "the app was asked")
            #expect(!FileManager.default.fileExists(atPath: "\(inbox)/com.example.viewer/Inbox/declined.txt"))
        }
    }

    @Test("a device's files in Inboxes count against limits.maxInboxBytesPerDevice until the app deletes them")
    func inboxQuota() async throws {
        try await withHosts(inboxQuota: 300_000) { sender, _, inbox, viewer in
            let bytes = [UInt8](repeating: 1, count: 200_000)
            func send(_ name: String) async -> Result<OpenResult, HandoffError> {
                await sender.agent.open(OpenRequest(bundleID: Self.manifest.identity.bundleID, fileName: name, fileSize: bytes.count), file: bytes, onPeer: "receiver")
            }
            #expect(try await send("one.bin").get().handled == true)
            let over = await send("two.bin")
            guard case .failure(let error) = over else { Issue.record("the second file passed the quota: \(over)"); return }
            #expect(error.code == .userActivityHandoffUserInfoTooLarge)
            #expect(error.message.contains("limits.maxInboxBytesPerDevice"), "\(error.message)")
            #expect(!FileManager.default.fileExists(atPath: "\(inbox)/com.example.viewer/Inbox/two.bin"))
            #expect(viewer.log.all.count == 1)
            // The app reads and deletes the first file: the device has its room back.
            try FileManager.default.removeItem(atPath: "\(inbox)/com.example.viewer/Inbox/one.bin")
            #expect(try await send("three.bin").get().handled == true)
        }
    }

    @Test("a file over limits.maxOpenFileBytes is refused with 4611 and nothing is written")
    func tooLarge() async throws {
        try await withHosts { sender, _, inbox, viewer in
            let request = OpenRequest(bundleID: Self.manifest.identity.bundleID, fileName: "big.bin", fileSize: 2 << 20)
            let result = await sender.agent.open(request, file: [UInt8](repeating: 7, count: 2 << 20), onPeer: "receiver")
            guard case .failure(let error) = result else { Issue.record("expected a failure"); return }
            #expect(error.code == .userActivityHandoffUserInfoTooLarge)
            #expect(!FileManager.default.fileExists(atPath: "\(inbox)/com.example.viewer/Inbox/big.bin"))
            #expect(viewer.log.all.isEmpty)
        }
    }

    @Test("an app that is not running: 4609; an unknown peer: 4609")
    func notRunning() async throws {
        try await withHosts { sender, _, _, _ in
            let request = OpenRequest(bundleID: "com.example.absent", url: URL(string: "https://example.com")!)
            let absent = await sender.agent.open(request, file: [], onPeer: "receiver")
            #expect((try? absent.get()) == nil)
            if case .failure(let error) = absent { #expect(error.code == .userActivityConnectionUnavailable) }
            if case .failure(let error) = await sender.agent.open(request, file: [], onPeer: "nobody") {
                #expect(error.code == .userActivityConnectionUnavailable)
            } else {
                Issue.record("expected a failure")
            }
        }
    }
}
