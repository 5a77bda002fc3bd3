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

/// A source app that writes before it reads: its first bytes leave the moment it accepts.
final class GreetingSourceDelegate: HandoffApplicationDelegate, UserActivityDelegate {
    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }

    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        try? await outputStream.write(Array("hello from the source".utf8))
        await outputStream.close()
        do { for try await _ in inputStream {} } catch {}
    }
}

/// The continuing app: collects every activity it is given.
final class CollectingDelegate: HandoffApplicationDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var activities: [UserActivity] = []

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
        lock.withLock { activities.append(userActivity) }
        return true
    }

    func takeAll() -> [UserActivity] { lock.withLock { defer { activities = [] }; return activities } }
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
            // Both directions have ended: each agent closes the pair's two connections (they used
            // to stay open for good, each agent waiting for the other to close).
            #expect(await Self.pairsClose([source.agent, destination.agent]), "stream pairs still open: \(source.agent.openStreamPairs), \(destination.agent.openStreamPairs)")
            if size >= 1 << 20 {
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("continuation stream: \(size >> 20) MiB through two agents in \(elapsed) (\(Int(Double(size) / seconds / 1e6)) MB/s, debug build)")
            }
            group.cancelAll()
        }
    }

    /// Whether every agent's relayed stream pairs have closed, polled for up to 10 s (the closes
    /// follow the last frames on the agents' event loops).
    static func pairsClose(_ agents: [Agent]) async -> Bool {
        for _ in 0..<1000 {
            if agents.allSatisfy({ $0.openStreamPairs == 0 }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
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
            #expect(result.by == "handler")
            let expected = "100000 " + SHA256.hash(data: [UInt8](repeating: 0, count: 100_000)).map { String(format: "%02x", $0) }.joined()
            #expect((try? String(contentsOfFile: out, encoding: .utf8)) == expected, "got \((try? String(contentsOfFile: out, encoding: .utf8)) ?? "no file")")
            group.cancelAll()
        }
        try? FileManager.default.removeItem(atPath: out)
    }

    /// Two agents, a source app S with `sourceDelegate` and a continuing app C with
    /// `continuingDelegate`; `body` gets S's published activity (streams supported when
    /// `streams`), already introduced to the continuing agent.
    func withApps(source sourceDelegate: some HandoffApplicationDelegate & UserActivityDelegate,
                  continuing continuingDelegate: some HandoffApplicationDelegate, streams: Bool = true,
                  _ body: @Sendable (AgentHarness, UserActivity) async throws -> Void) async throws {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst")
        let appS = HandoffApplication(manifest: Self.manifest, socketPath: source.socketPath, delegate: sourceDelegate)
        let appC = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath, delegate: continuingDelegate)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in [{ try await source.run() }, { try await destination.run() }, { try await appS.run() }, { try await appC.run() }] as [@Sendable () async throws -> Void] {
                group.addTask { try await task() }
            }
            try await appS.waitUntilConnected()
            try await appC.waitUntilConnected()
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.supportsContinuationStreams = streams
            activity.delegate = sourceDelegate
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            try await body(destination, activity)
            group.cancelAll()
        }
    }

    @Test("a source app that writes the moment it accepts: its bytes never overtake streamAccepted (4 × 4 opens at once)")
    func immediateWriter() async throws {
        let collector = CollectingDelegate()
        try await withApps(source: GreetingSourceDelegate(), continuing: collector) { destination, activity in
            // A few at once: the source's per-address limits (security.*) refuse large bursts.
            for _ in 0..<4 {
                for _ in 0..<4 { _ = try await destination.agent.continueActivity(id: activity.identifier).get() }
                let continued = collector.takeAll()
                #expect(continued.count == 4)
                // At once, as the benchmark's concurrent streams (where the source app's first bytes
                // once overtook `streamAccepted`, which the source agent now sends before it lets
                // the app write).
                let greetings = try await withThrowingTaskGroup(of: String.self) { opens in
                    for activity in continued {
                        opens.addTask {
                            let streams = try await activity.getContinuationStreams()
                            await streams.output.close()
                            var greeting: [UInt8] = []
                            for try await chunk in streams.input { greeting += chunk }
                            return String(decoding: greeting, as: UTF8.self)
                        }
                    }
                    return try await opens.reduce(into: []) { $0.append($1) }
                }
                #expect(greetings == Array(repeating: "hello from the source", count: continued.count))
            }
        }
    }

    @Test("streams for an activity that does not support them are refused with 4609")
    func unsupported() async throws {
        let keeper = KeepingDelegate()
        try await withApps(source: DigestingSourceDelegate(), continuing: keeper, streams: false) { destination, activity in
            _ = try await destination.agent.continueActivity(id: activity.identifier).get()
            let continued = try #require(keeper.kept.get())
            let error = await #expect(throws: HandoffError.self) { try await continued.getContinuationStreams() }
            #expect(error?.code == .userActivityConnectionUnavailable)
        }
    }
}
