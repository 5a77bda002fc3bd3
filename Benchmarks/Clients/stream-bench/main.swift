// stream-bench: continuation-stream benchmarks with HandoffKit, as an app uses them (scripts/bench).
//
//   stream-bench source --bytes B [--socket S]
//       registers app com.example.bench (team BENCHTEAM), publishes an activity of type
//       com.example.bench.stream with supportsContinuationStreams, prints "activity <ID>", and
//       for every stream opened to it writes B bytes (1 MiB writes) and closes its output.
//   stream-bench sink --streams N [--socket S] [--timeout-s T]
//       registers the same app on the continuing host and prints "ready". Each continue of the
//       activity (sent to this host's agent by scripts/bench) opens continuation streams; once N
//       are open, all are read at once, to the end. Prints one JSON line: per-stream bytes and
//       seconds, the aggregate throughput, and the time the streams were being read.
//   stream-bench app-source [--socket S]
//       registers the same app and publishes an activity of type com.example.bench.app with the
//       benchmarks' 3 KB userInfo (no streams); prints "activity <ID>" and stays registered.
//   stream-bench app-sink [--socket S]
//       registers the same app on the continuing host; its delegate takes every continue at once.
//       Prints "ready" and runs until stopped: continuing the activity on this host is a continue
//       delivered to an app, with no process started (scripts/bench's continue-to-app series).

import Foundation
import HandoffKit
import HandoffTestSupport
import Synchronization

let benchType = "com.example.bench.stream"
let appType = "com.example.bench.app"
let manifest = AppManifest(
    bundleID: "com.example.bench", teamID: "BENCHTEAM", activityTypes: [ActivityType(rawValue: benchType)!, ActivityType(rawValue: appType)!])

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func option(_ name: String, _ fallback: String? = nil) -> String? {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: "--\(name)"), i + 1 < args.count { return args[i + 1] }
    return fallback
}

// MARK: - Source

final class SourceDelegate: HandoffApplicationDelegate, UserActivityDelegate {
    let bytes: Int
    let served = Mutex(0)
    init(bytes: Int) { self.bytes = bytes }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }

    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        let chunk = [UInt8](repeating: 0xA5, count: 1 << 20)
        var sent = 0
        do {
            while sent < bytes {
                let n = min(chunk.count, bytes - sent)
                try await outputStream.write(chunk[..<n])
                sent += n
            }
        } catch {
            say("source stream failed after \(sent) bytes: \(error)")
        }
        await outputStream.close()
        do { for try await _ in inputStream {} } catch {}
        served.withLock { $0 += 1 }
    }
}

/// Registers the app, then runs `body` while it is connected; returns when the app stops.
func withApplication(_ delegate: some HandoffApplicationDelegate, _ body: @escaping @Sendable (HandoffApplication) async throws -> Void) async throws {
    let application = HandoffApplication(manifest: manifest, socketPath: option("socket"), delegate: delegate)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await application.run() }
        try await application.waitUntilConnected()
        try await body(application)
        try await group.next()
    }
}

func runSource() async throws {
    let bytes = Int(option("bytes", "\(64 << 20)")!)!
    let delegate = SourceDelegate(bytes: bytes)
    try await withApplication(delegate) { application in
        let activity = UserActivity(activityType: benchType, application: application)
        activity.title = "Stream benchmark"
        activity.userInfo = ["bytes": .integer(Int64(bytes))]
        activity.supportsContinuationStreams = true
        activity.delegate = delegate
        try await activity.becomeCurrent()
        say("activity \(activity.identifier.uuidString)")
    }
}

// MARK: - Sink

/// Collects opened streams until N are open, then reads them all at once.
final class SinkDelegate: HandoffApplicationDelegate {
    let expected: Int
    let opened = Mutex<[ContinuationStreams]>([])
    let failures = Mutex<[String]>([])
    /// Yields on every open and every failure.
    let allOpen: AsyncStream<Void>.Continuation
    let allOpenSignal: AsyncStream<Void>

    init(expected: Int) {
        self.expected = expected
        (allOpenSignal, allOpen) = AsyncStream.makeStream(of: Void.self)
    }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { true }

    func didUpdate(_ userActivity: UserActivity) async {
        FileHandle.standardError.write(Data("didUpdate\n".utf8))
        // Open on a task of its own: delegate calls come one at a time.
        Task {
            do {
                let streams = try await userActivity.getContinuationStreams()
                let count = opened.withLock { $0.append(streams); return $0.count }
                FileHandle.standardError.write(Data("opened \(count)\n".utf8))
                allOpen.yield()
            } catch {
                FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
                failures.withLock { $0.append("\(error)") }
                allOpen.yield()
            }
        }
    }
}

func runSink() async throws {
    let expected = Int(option("streams", "1")!)!
    let timeout = Double(option("timeout-s", "120")!)!
    let delegate = SinkDelegate(expected: expected)
    let application = HandoffApplication(manifest: manifest, socketPath: option("socket"), delegate: delegate)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await application.run() }
        try await application.waitUntilConnected()
        say("ready")
        group.addTask {
            try await Task.sleep(for: .seconds(timeout))
            say("{\"errors\": 1, \"error_messages\": [\"timed out after \(timeout) s\"], \"samples_us\": []}")
            exit(1)
        }
        for await _ in delegate.allOpenSignal {
            if delegate.opened.withLock({ $0.count }) + delegate.failures.withLock({ $0.count }) >= expected { break }
        }
        let streams = delegate.opened.withLock { $0 }
        say("reading \(streams.count) streams")
        let clock = ContinuousClock()
        let start = clock.now
        let startNs = Int64(Date().timeIntervalSince1970 * 1e9)
        let results = await withTaskGroup(of: (Int, Duration, String?).self) { readers in
            for pair in streams {
                readers.addTask {
                    var received = 0
                    do {
                        for try await chunk in pair.input { received += chunk.count }
                    } catch {
                        return (received, clock.now - start, "\(error)")
                    }
                    await pair.output.close()
                    return (received, clock.now - start, nil)
                }
            }
            var all: [(Int, Duration, String?)] = []
            for await result in readers { all.append(result) }
            return all
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let total = results.reduce(0) { $0 + $1.0 }
        let errors = results.compactMap(\.2) + delegate.failures.withLock { $0 }
        var json: [String: Any] = [
            "streams": streams.count, "bytes_total": total, "seconds": seconds,
            "throughput_mib_s": Double(total) / seconds / 1_048_576,
            "samples_us": results.map { Double($0.1.components.seconds) * 1e6 + Double($0.1.components.attoseconds) / 1e12 },
            "bytes_per_stream": results.map(\.0),
            "errors": errors.count, "error_messages": Array(errors.prefix(5)),
            "read_start_ns": startNs, "read_end_ns": Int64(Date().timeIntervalSince1970 * 1e9),
        ]
        if streams.count < expected { json["errors"] = errors.count + (expected - streams.count - delegate.failures.withLock { $0.count }) }
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        say(String(decoding: data, as: UTF8.self))
        exit(0)
    }
}

// MARK: - A continue delivered to an app

/// Takes every continue at once and does nothing else.
final class AcceptingDelegate: HandoffApplicationDelegate {
    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { true }
}

func runAppSource() async throws {
    try await withApplication(AcceptingDelegate()) { application in
        let activity = UserActivity(activityType: appType, application: application)
        activity.title = "App benchmark"
        activity.userInfo = BenchmarkFixtures.userInfo()
        try await activity.becomeCurrent()
        say("activity \(activity.identifier.uuidString)")
    }
}

func runAppSink() async throws {
    try await withApplication(AcceptingDelegate()) { _ in say("ready") }
}

// MARK: - main

do {
    switch CommandLine.arguments.dropFirst().first {
    case "source": try await runSource()
    case "sink": try await runSink()
    case "app-source": try await runAppSource()
    case "app-sink": try await runAppSink()
    default:
        FileHandle.standardError.write(Data("usage: stream-bench source --bytes B | sink --streams N | app-source | app-sink\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("stream-bench: \(error)\n".utf8))
    exit(1)
}
