import ArgumentParser
import Dispatch
import HandoffCore
import HandoffTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation

/// `handoff browser-host`: the native-messaging host of the browser extension
/// (Integrations/browser). The browser starts it and writes the extension's messages to its
/// standard input; it offers the focused tab's page as an `NSUserActivityTypeBrowsingWeb`
/// activity (``BrowserPageTracker``) and answers each message with `{"type": "status", "ok",
/// "offered"?, "error"?}` on standard output. Nothing else is written there: standard output is
/// the browser's channel. It resigns what it offered when the browser closes the channel.
struct BrowserHost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browser-host",
        abstract: "The browser extension's native-messaging host: offers the focused tab's page (started by the browser).",
        discussion: "The browser passes the extension's origin (Chrome) or the manifest path and extension ID (Firefox) as arguments; they are not used.")
    @OptionGroup var options: GlobalOptions
    @Argument(parsing: .allUnrecognized, help: .hidden) var browserArguments: [String] = []

    func run() async throws {
        var tracker = BrowserPageTracker<ContinuousClock.Instant>()
        var framing = NativeMessageFraming()
        let clock = ContinuousClock()
        var offered: UUID?
        let (wakes, wake) = AsyncStream.makeStream(of: BrowserHostWake.self)
        StandardInputChunks.start(into: wake)
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The blur grace is checked every second.
            group.addTask {
                while true {
                    try await clock.sleep(for: .seconds(1))
                    wake.yield(.tick)
                }
            }
            defer { group.cancelAll() }
            for await event in wakes {
                var actions: [BrowserPageTracker<ContinuousClock.Instant>.Action?] = []
                switch event {
                case .ended:
                    // The browser closed the channel: it quit, or the extension was removed.
                    if let action = tracker.closed() { offered = await perform(action, offered: offered) }
                    return
                case .tick:
                    actions.append(tracker.tick(now: clock.now))
                case .bytes(let bytes):
                    let messages: [JSONValue]
                    do { messages = try framing.feed(bytes) } catch {
                        FileHandle.standardError.write(Data("handoff browser-host: \(error)\n".utf8))
                        if let action = tracker.closed() { offered = await perform(action, offered: offered) }
                        throw ExitCode(65)
                    }
                    for message in messages {
                        guard let parsed = BrowserPageTracker<ContinuousClock.Instant>.Message(json: message) else {
                            write(["type": .string("status"), "ok": .bool(false), "error": .string("unknown message; expected type page, blur or focus")])
                            continue
                        }
                        actions.append(tracker.received(parsed, now: clock.now))
                    }
                }
                for case let action? in actions { offered = await perform(action, offered: offered) }
            }
        }
    }

    /// Publishes or resigns through the agent; answers the extension with the outcome. Returns
    /// the activity offered now.
    private func perform(_ action: BrowserPageTracker<ContinuousClock.Instant>.Action, offered: UUID?) async -> UUID? {
        var now = offered
        var error: HandoffError?
        switch action {
        case .publish(let url, let title):
            var activity = Activity(activityType: .browsingWeb, title: title)
            activity.webpageURL = url
            switch await options.client.call(.publish(activity)) {
            case .success(let answer): now = PublishResult(json: answer).id
            case .failure(let failure): error = failure
            }
        case .resign:
            now = nil
        }
        // The page offered before is replaced (or withdrawn): resign it.
        if let offered, offered != now { _ = await options.client.call(.resign(id: offered)) }
        var status: [String: JSONValue] = ["type": .string("status"), "ok": .bool(error == nil)]
        if let now { status["offered"] = .string(now.uuidString) }
        if let error { status["error"] = .string(error.description) }
        write(status)
        return now
    }

    private func write(_ message: [String: JSONValue]) {
        FileHandle.standardOutput.write(Data(NativeMessageFraming.frame(.object(message))))
    }
}

/// What wakes the browser host: bytes from the browser, the end of its channel, a second gone by.
enum BrowserHostWake: Sendable {
    case bytes([UInt8])
    case ended
    case tick
}

/// Standard input as chunks, read on a thread of its own (a blocking read must not hold one of
/// the few threads Swift concurrency runs on).
enum StandardInputChunks {
    static func start(into continuation: AsyncStream<BrowserHostWake>.Continuation) {
        DispatchQueue(label: "handoff.browser-host.stdin").async {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                continuation.yield(.bytes(Array(buffer[0..<n])))
            }
            continuation.yield(.ended)
        }
    }
}
