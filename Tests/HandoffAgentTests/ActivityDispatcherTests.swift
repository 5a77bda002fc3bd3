import HandoffConfiguration
import HandoffCore
import HandoffTestSupport
import Logging
import Testing

@testable import HandoffAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation

let quietLogger = Logger(label: "handoff.tests.agent") { _ in SwiftLogNoOpLogHandler() }

/// A scratch directory, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func contents(_ name: String) -> String? {
        FileManager.default.contents(atPath: file(name)).map { String(decoding: $0, as: UTF8.self) }
    }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: file(name)) }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// `/bin/sh -c script` with `arguments` as $1, $2...
func shell(_ script: String, _ arguments: String...) -> [String] {
    ["/bin/sh", "-c", script, "handler"] + arguments
}

/// A userInfo with the values a JSON round trip may get wrong.
let trickyUserInfo: UserInfo = [
    "integer": .integer(1),
    "double": .double(1),
    "negativeZero": .double(-0.0),
    "big": .integer(.max),
    "text": .string("Grüße \"quoted\" \\ back\nslash 🌍"),
    "data": .data(Data([0, 1, 0xFE, 0xFF])),
    "date": .date(Date(timeIntervalSinceReferenceDate: 812_345_678.5)),
    "url": .url(URL(string: "https://example.com/a?b=c#d")!),
    "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
    "flag": .bool(false),
    "nothing": .null,
    "list": .array([.integer(1), .double(2.5), .string("3"), .array([]), .dictionary([:])]),
    "nested": .dictionary(["deeper": .dictionary(["deepest": .bool(true)])]),
]

@Suite("ActivityDispatcher with real commands", .timeLimit(.minutes(1)))
struct ActivityDispatcherTests {
    init() { SIGPIPEWatch.install() }

    func dispatcher(handlers: [AgentConfiguration.Handler] = [], urlOpener: [String] = ["/bin/false"], handlerTimeout: Duration = .seconds(20)) -> ActivityDispatcher {
        var configuration = AgentConfiguration(name: "test", socketPath: "/tmp/unused.sock")
        configuration.handlers = handlers
        configuration.urlOpener = urlOpener
        configuration.limits.handlerTimeout = handlerTimeout
        return ActivityDispatcher(configuration: configuration, logger: quietLogger)
    }

    static var fullActivity: Activity {
        Activity(
            id: UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!,
            activityType: Sample.notesEdit, title: "Shopping list", userInfo: trickyUserInfo,
            requiredUserInfoKeys: nil, targetContentIdentifier: "note-42", needsSave: true,
            keywords: ["groceries", "list"], persistentIdentifier: "persist-1",
            isEligibleForSearch: true, expirationDate: Date(timeIntervalSince1970: 2_000_000_000),
            webpageURL: URL(string: "https://notes.example.com/42")!, referrerURL: URL(string: "https://example.com/")!)
    }

    @Test("a handler receives the activity as JSON on standard input")
    func handlerReceivesJSON() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let command = shell(#"cat > "$1""#, dir.file("in.json"))
        let d = dispatcher(handlers: [.init(activityTypes: [Sample.notesEdit.rawValue], command: command)])
        let activity = Self.fullActivity

        let result = await d.deliver(activity, from: "h1")
        #expect(try result.get() == ActivityDispatcher.Delivery(by: "handler", command: command) )

        let text = try #require(dir.contents("in.json"))
        #expect(text.hasSuffix("\n"))
        let received = try Activity(json: try JSONValue(parsing: text))
        #expect(PropertyListValue.dictionary(received.userInfo).isIdentical(to: .dictionary(activity.userInfo)))
        #expect(received.id == activity.id)
        #expect(received.activityType == activity.activityType)
        #expect(received.title == activity.title)
        #expect(received.webpageURL == activity.webpageURL)
        #expect(received.referrerURL == activity.referrerURL)
        #expect(received.expirationDate == activity.expirationDate)
        #expect(received.keywords == activity.keywords)
        #expect(received.targetContentIdentifier == "note-42")
        #expect(received.needsSave)
        #expect(received.isEligibleForSearch)
    }

    @Test("a large activity reaches the handler whole")
    func largeInput() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        var activity = Sample.activity(1)
        activity.userInfo = ["blob": .data(Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) }))]
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: shell(#"cat > "$1""#, dir.file("in.json")))])
        #expect(try await d.deliver(activity, from: "h1").get().by == "handler")
        let received = try Activity(json: try JSONValue(parsing: try #require(dir.contents("in.json"))))
        #expect(PropertyListValue.dictionary(received.userInfo).isIdentical(to: .dictionary(activity.userInfo)))
    }

    @Test("a handler that fails is followed by the next one, which delivers")
    func secondHandlerDelivers() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let failing = shell(#"cat > /dev/null; touch "$1"; exit 1"#, dir.file("first-ran"))
        let succeeding = shell(#"cat > "$1""#, dir.file("second.json"))
        let d = dispatcher(handlers: [
            .init(activityTypes: [Sample.notesEdit.rawValue], command: failing),
            .init(activityTypes: [Sample.notesEdit.rawValue], command: succeeding),
        ])
        let result = await d.deliver(Sample.activity(1), from: "h1")
        #expect(try result.get() == .init(by: "handler", command: succeeding))
        #expect(dir.exists("first-ran"))
        #expect(dir.exists("second.json"))
    }

    @Test("a handler that does not read its input and fails is followed by the next one")
    func failingHandlerIgnoringInput() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let succeeding = shell(#"cat > "$1""#, dir.file("second.json"))
        let d = dispatcher(handlers: [
            .init(activityTypes: ["*"], command: ["/bin/sh", "-c", "exit 1"]),
            .init(activityTypes: ["*"], command: succeeding),
        ])
        #expect(try await d.deliver(Sample.activity(1), from: "h1").get() == .init(by: "handler", command: succeeding))
    }

    @Test("a handler that exits without reading its input does not kill the agent with SIGPIPE")
    func handlerIgnoringLargeInput() async throws {
        // More than a pipe buffer (64 KiB) of JSON: the agent is still writing when the handler
        // exits, so the write hits a pipe without a reader.
        var activity = Sample.activity(1)
        activity.userInfo = ["blob": .data(Data(repeating: 0x5A, count: 200_000))]
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: ["/bin/sh", "-c", "exit 0"])])
        let before = SIGPIPEWatch.count
        let result = await d.deliver(activity, from: "h1")
        #expect(try result.get().by == "handler")
        #expect(SIGPIPEWatch.count == before, """
            writing the activity to a handler that exited raised SIGPIPE; outside this test (which \
            counts the signal) its default action kills handoffd
            """)
    }

    @Test("the first handler that succeeds is the only one run")
    func stopsAtFirstSuccess() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let first = shell(#"touch "$1""#, dir.file("first"))
        let second = shell(#"touch "$1""#, dir.file("second"))
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: first), .init(activityTypes: ["*"], command: second)])
        #expect(try await d.deliver(Sample.activity(1), from: "h1").get().command == first)
        #expect(dir.exists("first"))
        #expect(!dir.exists("second"))
    }

    @Test("with no handler the urlOpener gets the webpageURL as its last argument")
    func urlOpener() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let opener = ["/bin/sh", "-c", #"for a in "$@"; do printf '%s\n' "$a"; done > "$0""#, dir.file("args"), "--new-window"]
        let d = dispatcher(urlOpener: opener)
        var activity = Sample.activity(1)
        activity.webpageURL = URL(string: "https://example.com/page?q=a%20b&x=1#frag")!

        let result = await d.deliver(activity, from: "h1")
        #expect(try result.get() == .init(by: "urlOpener", command: opener + ["https://example.com/page?q=a%20b&x=1#frag"]))
        let lines = try #require(dir.contents("args")).split(separator: "\n").map(String.init)
        #expect(lines == ["--new-window", "https://example.com/page?q=a%20b&x=1#frag"])
    }

    @Test("when every handler fails the urlOpener still opens the URL")
    func urlOpenerAfterFailedHandlers() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let opener = ["/bin/sh", "-c", #"printf '%s' "$1" > "$0""#, dir.file("url")]
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: ["/bin/sh", "-c", "cat >/dev/null; exit 3"])], urlOpener: opener)
        var activity = Sample.activity(1)
        activity.webpageURL = URL(string: "https://example.com/x")!
        #expect(try await d.deliver(activity, from: "h1").get().by == "urlOpener")
        #expect(dir.contents("url") == "https://example.com/x")
    }

    @Test("a peer's web page URL of another scheme, or one that could read as an option, never reaches the opener",
          arguments: ["file:///etc/passwd", "FILE:///etc/shadow", "smb://attacker/share/x", "vscode://file/x", "javascript:alert(1)",
                      "data:text/html,hi", "--help", "-new-window", "ssh://x", "https:", "http:///nohost", "relative/path"])
    func refusesUnsafeWebpageURLs(_ text: String) async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let opener = ["/bin/sh", "-c", #"printf '%s' "$1" > "$0""#, dir.file("opened")]
        var activity = Sample.activity(1)
        activity.webpageURL = try #require(URL(string: text))
        let result = await dispatcher(urlOpener: opener).deliver(activity, from: "h1")
        guard case .failure(let error) = result else {
            Issue.record("\(text) was opened: \(result)")
            return
        }
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("nothing was opened"), "\(error.message)")
        #expect(!dir.exists("opened"), "the opener ran for \(text)")
    }

    @Test("security.urlSchemes allows more schemes one by one; http and https stay case-insensitive")
    func allowedSchemes() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let opener = ["/bin/sh", "-c", #"printf '%s' "$1" > "$0""#, dir.file("opened")]
        var configured = dispatcher(urlOpener: opener)
        configured.urlPolicy = PeerURLPolicy(webpageSchemes: ["https", "zoommtg"])
        var activity = Sample.activity(1)
        activity.webpageURL = URL(string: "zoommtg://zoom.us/join?confno=1")!
        #expect(try await configured.deliver(activity, from: "h1").get().by == "urlOpener")
        activity.webpageURL = URL(string: "HTTPS://example.com/x")!
        #expect(try await configured.deliver(activity, from: "h1").get().by == "urlOpener")
        activity.webpageURL = URL(string: "http://example.com/x")!
        #expect(throws: HandoffError.self) { try _ = configured.urlPolicy.webpageArgument(activity.webpageURL!).get() }
        #expect(PeerURLPolicy.problem(withScheme: "file") != nil)
        #expect(PeerURLPolicy.problem(withScheme: "-x") != nil)
        #expect(PeerURLPolicy.problem(withScheme: "*") != nil)
        #expect(PeerURLPolicy.problem(withScheme: "web+app") == nil)
    }

    @Test("no handler and no webpageURL: 4608 telling to add a handler")
    func noHandlerNoURL() async throws {
        let d = dispatcher()
        let result = await d.deliver(Sample.activity(1), from: "h1")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("Add a handler"))
        #expect(error.message.contains(Sample.notesEdit.rawValue))
    }

    @Test("every handler failing and no URL: 4608 saying what was tried")
    func allFail() async throws {
        let d = dispatcher(handlers: [
            .init(activityTypes: ["*"], command: ["/bin/sh", "-c", "cat >/dev/null; exit 7"]),
            .init(activityTypes: ["*"], command: ["/nonexistent/handoff-handler"]),
        ])
        let result = await d.deliver(Sample.activity(1), from: "h1")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("exited with status 7"))
        #expect(error.message.contains("/nonexistent/handoff-handler"))
        #expect(error.message.contains("could not start"))
    }

    @Test("a handler that runs past limits.handlerTimeout is killed and does not count as handled")
    func handlerTimeout() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let configuration = try ConfigurationFile.parse(
            Array(#"{"limits": {"handlerTimeout": 0.5}}"#.utf8), source: "test", defaultName: "test", defaultSocketPath: "/tmp/unused.sock")
        #expect(configuration.limits.handlerTimeout == .milliseconds(500))
        var withHandler = configuration
        // The shell records its PID, then becomes `sleep` (same PID).
        withHandler.handlers = [.init(activityTypes: ["*"], command: shell(#"echo $$ > "$1"; exec sleep 30"#, dir.file("pid")))]
        // The timeout runs on a manual clock, advanced once the handler runs: on a loaded machine
        // the shell may take longer than the timeout to start.
        let timeoutClock = ManualClock()
        let d = ActivityDispatcher(configuration: withHandler, runner: CommandRunner(clock: timeoutClock), logger: quietLogger)

        let delivery = Task { await d.deliver(Sample.activity(1), from: "h1") }
        defer { delivery.cancel() }  // stops the handler if the test fails before the timeout
        // Up to 30 s for the shell to start and write its PID.
        var polls = 0
        while dir.contents("pid").flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) == nil && polls < 3000 {
            try await Task.sleep(for: .milliseconds(10))
            polls += 1
        }
        // The handler's timer is limits.handlerTimeout: it is due at 0.5 s.
        try await timeoutClock.waitForSleeper(until: .zero.advanced(by: configuration.limits.handlerTimeout))
        let clock = ContinuousClock()
        let start = clock.now
        timeoutClock.advance(by: configuration.limits.handlerTimeout)
        let result = await delivery.value
        let elapsed = start.duration(to: clock.now)

        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("did not finish in time"))
        #expect(elapsed < .seconds(10), "the handler was not killed at the timeout (took \(elapsed))")

        // The handler process is gone.
        let pidText = try #require(dir.contents("pid")).trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = try #require(pid_t(pidText))
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "handler process \(pid) is still running")
    }

    @Test("a handler for another type is not run")
    func otherTypeNotRun() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let other = shell(#"touch "$1""#, dir.file("other-ran"))
        let mine = shell(#"cat > "$1""#, dir.file("mine.json"))
        let d = dispatcher(handlers: [
            .init(activityTypes: [Sample.mapsView.rawValue], command: other),
            .init(activityTypes: [Sample.notesEdit.rawValue], command: mine),
        ])
        #expect(try await d.deliver(Sample.activity(1, type: Sample.notesEdit), from: "h1").get().command == mine)
        #expect(!dir.exists("other-ran"))

        // With only the other type's handler: nothing runs, and the error says no handler takes it.
        let onlyOther = dispatcher(handlers: [.init(activityTypes: [Sample.mapsView.rawValue], command: other)])
        let result = await onlyOther.deliver(Sample.activity(2, type: Sample.notesEdit), from: "h1")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("no handler takes"))
        #expect(!dir.exists("other-ran"))
    }

    @Test("a \"*\" handler takes every type", arguments: ["com.example.notes.edit", "org.other.thing", "NSUserActivityTypeBrowsingWeb"])
    func starTakesEverything(type: String) async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let star = shell(#"cat > "$1""#, dir.file("in.json"))
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: star)])
        let activity = Sample.activity(1, type: ActivityType(rawValue: type)!)
        #expect(try await d.deliver(activity, from: "h1").get() == .init(by: "handler", command: star))
        let received = try Activity(json: try JSONValue(parsing: try #require(dir.contents("in.json"))))
        #expect(received.activityType.rawValue == type)
    }

    @Test("handlers see HANDOFF_ACTIVITY_TYPE, HANDOFF_ACTIVITY_ID and HANDOFF_PEER")
    func environment() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let command = shell(#"printf '%s\n%s\n%s\n' "$HANDOFF_ACTIVITY_TYPE" "$HANDOFF_PEER" "$HANDOFF_ACTIVITY_ID" > "$1""#, dir.file("env"))
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: command)])
        let activity = Sample.activity(7)
        #expect(try await d.deliver(activity, from: "Kitchen Mac").get().by == "handler")
        let lines = try #require(dir.contents("env")).split(separator: "\n").map(String.init)
        #expect(lines == [Sample.notesEdit.rawValue, "Kitchen Mac", activity.id.uuidString])
    }

    @Test("handlers see the referrerURL as HANDOFF_REFERRER_URL, only when its scheme is one security.urlSchemes allows")
    func referrerEnvironment() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let command = shell(#"printf '%s' "${HANDOFF_REFERRER_URL-unset}" > "$1""#, dir.file("env"))
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: command)])
        var activity = Sample.activity(7)
        activity.referrerURL = URL(string: "https://example.com/search?q=notes")!
        _ = try await d.deliver(activity, from: "h1").get()
        #expect(dir.contents("env") == "https://example.com/search?q=notes")
        activity.referrerURL = URL(string: "file:///etc/passwd")!
        _ = try await d.deliver(activity, from: "h1").get()
        #expect(dir.contents("env") == "unset")
    }

    @Test("the URL opener sees the same environment")
    func urlOpenerEnvironment() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let opener = ["/bin/sh", "-c", #"printf '%s|%s' "$HANDOFF_ACTIVITY_TYPE" "$HANDOFF_PEER" > "$0""#, dir.file("env")]
        var activity = Sample.activity(1, type: .browsingWeb)
        activity.webpageURL = URL(string: "https://example.com/")!
        #expect(try await dispatcher(urlOpener: opener).deliver(activity, from: "h9").get().by == "urlOpener")
        #expect(dir.contents("env") == "NSUserActivityTypeBrowsingWeb|h9")
    }

    @Test("a program without a slash is looked up on PATH")
    func pathLookup() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let command = ["sh", "-c", #"cat > "$0""#, dir.file("in.json")]
        let d = dispatcher(handlers: [.init(activityTypes: ["*"], command: command)])
        #expect(try await d.deliver(Sample.activity(1), from: "h1").get().command == command)
        #expect(dir.exists("in.json"))
    }
}
