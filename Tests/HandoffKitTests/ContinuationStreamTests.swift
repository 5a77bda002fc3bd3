import Crypto
import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// The source app's side: reads everything, then answers with the SHA-256 and byte count of
/// what it received.
final class DigestingSourceDelegate: HandoffApplicationDelegate, UserActivityDelegate {
    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }

    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        var hash = SHA256()
        var count = 0
        do {
            for try await chunk in inputStream {
                hash.update(data: chunk)
                count += chunk.count
            }
            let answer = "\(count) " + hash.finalize().map { String(format: "%02x", $0) }.joined()
            try await outputStream.write(Array(answer.utf8))
        } catch {
            try? await outputStream.write(Array("error \(error)".utf8))
        }
        await outputStream.close()
    }
}

/// The continuing app: keeps the activity it was given.
final class KeepingDelegate: HandoffApplicationDelegate {
    let kept = Kept()
    final class Kept: @unchecked Sendable {
        private let lock = NSLock()
        private var value: UserActivity?
        func set(_ v: UserActivity) { lock.lock(); value = v; lock.unlock() }
        func get() -> UserActivity? { lock.lock(); defer { lock.unlock() }; return value }
    }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
        kept.set(userActivity)
        return true
    }
}

@Suite("HandoffKit continuation streams", .timeLimit(.minutes(2)))
struct ContinuationStreamTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!
    static let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [notes])

    /// Deterministic bytes: a 64-bit xorshift stream.
    static func pattern(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { raw in
            var i = 0
            while i + 8 <= count {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                raw.storeBytes(of: state, toByteOffset: i, as: UInt64.self)
                i += 8
            }
        }
        return out
    }

    @Test("bytes cross both agents bit-exact in both directions, digest-checked", arguments: [0, 1, 70_000, 64 << 20])
    func digestChecked(size: Int) async throws {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst")
        let sourceDelegate = DigestingSourceDelegate()
        let keeper = KeepingDelegate()
        let appS = HandoffApplication(manifest: Self.manifest, socketPath: source.socketPath, delegate: sourceDelegate)
        let appC = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath, delegate: keeper)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            group.addTask { try await appS.run() }
            group.addTask { try await appC.run() }
            try await appS.waitUntilConnected()
            try await appC.waitUntilConnected()

            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.supportsContinuationStreams = true
            activity.delegate = sourceDelegate
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            _ = try await destination.agent.continueActivity(id: activity.identifier).get()
            let continued = try #require(keeper.kept.get())

            let streams = try await continued.getContinuationStreams()
            let data = Self.pattern(size, seed: UInt64(size) + 7)
            let expected = "\(size) " + SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            let start = ContinuousClock.now
            // Write in 1 MiB pieces while nothing reads the reply: backpressure, not buffering.
            var offset = 0
            while offset < data.count {
                let end = min(offset + (1 << 20), data.count)
                try await streams.output.write(data[offset..<end])
                offset = end
            }
            await streams.output.close()
            var reply: [UInt8] = []
            for try await chunk in streams.input { reply += chunk }
            let elapsed = ContinuousClock.now - start
            #expect(String(decoding: reply, as: UTF8.self) == expected)
            if size >= 1 << 20 {
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("continuation stream: \(size >> 20) MiB through two agents in \(elapsed) (\(Int(Double(size) / seconds / 1e6)) MB/s, debug build)")
            }
            group.cancelAll()
        }
    }

    @Test("a command handler with streams gets them on stdin and stdout")
    func commandHandlerStreams() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("cmd-\(UUID().uuidString.prefix(8)).out").path
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst") {
            $0.handlers = [.init(activityTypes: [Self.notes.rawValue],
                                 command: ["sh", "-c", "head -c 100000 /dev/zero; exec 1>&-; cat > '\(out)'; test -n \"$HANDOFF_ACTIVITY\""],
                                 streams: true)]
        }
        let sourceDelegate = DigestingSourceDelegate()
        let appS = HandoffApplication(manifest: Self.manifest, socketPath: source.socketPath, delegate: sourceDelegate)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            group.addTask { try await appS.run() }
            try await appS.waitUntilConnected()
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.supportsContinuationStreams = true
            activity.delegate = sourceDelegate
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            let result = try await destination.agent.continueActivity(id: activity.identifier).get()
            #expect(result["by"]?.stringValue == "handler")
            let expected = "100000 " + SHA256.hash(data: [UInt8](repeating: 0, count: 100_000)).map { String(format: "%02x", $0) }.joined()
            #expect((try? String(contentsOfFile: out, encoding: .utf8)) == expected, "got \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "no file")")
            group.cancelAll()
        }
        try? FileManager.default.removeItem(atPath: out)
    }

    @Test("streams for an activity that does not support them are refused with 4609")
    func unsupported() async throws {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst")
        let keeper = KeepingDelegate()
        let appS = HandoffApplication(manifest: Self.manifest, socketPath: source.socketPath, delegate: DigestingSourceDelegate())
        let appC = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath, delegate: keeper)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in [{ try await source.run() }, { try await destination.run() }, { try await appS.run() }, { try await appC.run() }] as [@Sendable () async throws -> Void] {
                group.addTask { try await task() }
            }
            try await appS.waitUntilConnected()
            try await appC.waitUntilConnected()
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            _ = try await destination.agent.continueActivity(id: activity.identifier).get()
            let continued = try #require(keeper.kept.get())
            let error = await #expect(throws: HandoffError.self) { try await continued.getContinuationStreams() }
            #expect(error?.code == .userActivityConnectionUnavailable)
            group.cancelAll()
        }
    }
}
