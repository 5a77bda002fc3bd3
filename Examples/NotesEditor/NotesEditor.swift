import ArgumentParser
import Crypto
import Foundation
import HandoffKit
import Synchronization

/// A small notes editor that shows HandoffKit on two hosts:
///
///     h1$ notes-example edit --title "Shopping list" --text "milk, eggs"
///     h2$ notes-example open            # waits; `handoff continue ID` on h2 opens the note here
///
/// Notes are searchable (`handoff search milk`). A note edited with `--id` is kept in the app's
/// store under that ID, its persistentIdentifier: `handoff link --persistent-id ID` makes a link
/// that opens it from the store later; a note the store no longer has falls back to its `--url`.
///
/// Every callback is printed as it happens, so the lifecycle can be followed on both hosts.
@main
struct NotesEditor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes-example",
        abstract: "An example HandoffKit app: edit a note on one host, continue it on another.",
        subcommands: [Edit.self, Open.self])

    static let activityType = "com.example.notes.edit"

    struct AppOptions: ParsableArguments {
        @Option(help: "The app's team ID; activities go only to apps of the same team.")
        var team = "EXAMPLETEAM"
        @Option(help: "The app's bundle ID.")
        var bundleID = "com.example.notes"
        @Option(help: "Where the app keeps notes edited with --id (default: $XDG_DATA_HOME/notes-example).")
        var store: String?

        var manifest: AppManifest {
            AppManifest(bundleID: bundleID, teamID: team, activityTypes: [ActivityType(rawValue: NotesEditor.activityType)!])
        }
    }
}

/// Prints one line per event, flushed at once (the output is often a pipe or a file).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Edit a note: publish it as the current activity and wait.")
    @OptionGroup var app: NotesEditor.AppOptions
    @Option(help: "The note's title.") var title = "Untitled note"
    @Option(help: "The note's text.") var text = ""
    @Option(name: .customLong("save-delay-ms"), help: "Take this long to save (to see 4610 on the other host).")
    var saveDelayMs = 0
    @Option(name: .customLong("stream-bytes"), help: "Offer continuation streams and send this many bytes over them (the note's attachment).")
    var streamBytes: Int?
    @Option(help: "The note's ID: keep the note in the app's store under it, as the activity's persistentIdentifier.")
    var id: String?
    @Option(help: "Search keywords, comma-separated (the title's words are found anyway).")
    var keywords: String?
    @Option(help: "The note's web page, opened when a host cannot open the note itself.")
    var url: String?

    func run() async throws {
        let editor = NoteEditorDelegate(text: text, saveDelay: .milliseconds(saveDelayMs), streamBytes: streamBytes)
        let application = HandoffApplication(manifest: app.manifest, delegate: editor)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.run() }
            try await application.waitUntilConnected()
            let activity = UserActivity(activityType: NotesEditor.activityType, application: application)
            activity.title = title
            activity.userInfo = ["text": .string(text), "cursor": .integer(Int64(text.count))]
            activity.needsSave = true  // ask us for the latest text when another host continues
            activity.targetContentIdentifier = "notes/\(title)"
            activity.isEligibleForSearch = true
            activity.keywords = Set((keywords ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            activity.webpageURL = url.flatMap(URL.init(string:))
            if let id {
                try NoteStore(directory: app.store).save(.init(title: title, text: text), id: id)
                activity.persistentIdentifier = id
            }
            activity.delegate = editor
            activity.supportsContinuationStreams = streamBytes != nil
            try await activity.becomeCurrent()
            say("editing \"\(title)\": activity \(activity.identifier.uuidString) is current")
            try await group.next()
        }
    }
}

/// The source side: saves the latest text before a continuation, hears when it was continued.
final class NoteEditorDelegate: HandoffApplicationDelegate, UserActivityDelegate {
    let text: String
    let saveDelay: Duration
    let streamBytes: Int?
    init(text: String, saveDelay: Duration, streamBytes: Int?) {
        self.text = text
        self.saveDelay = saveDelay
        self.streamBytes = streamBytes
    }

    /// Sends the attachment: `streamBytes` deterministic bytes, then prints their SHA-256.
    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        let total = streamBytes ?? 0
        say("streams opened: sending \(total) bytes")
        var hash = SHA256()
        var generator = PatternGenerator(seed: 42)
        var sent = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        do {
            while sent < total {
                let count = min(chunk.count, total - sent)
                generator.fill(&chunk, count: count)
                hash.update(data: chunk[..<count])
                try await outputStream.write(chunk[..<count])
                sent += count
            }
        } catch {
            say("stream failed: \(error)")
        }
        await outputStream.close()
        do { for try await _ in inputStream {} } catch {}  // until the other side closes its output
        say("sent \(sent) bytes sha256 \(hash.finalize().map { String(format: "%02x", $0) }.joined())")
    }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }

    func userActivityWillSave(_ activity: UserActivity) async {
        if saveDelay > .zero { try? await Task.sleep(for: saveDelay) }
        activity.addUserInfoEntries(from: ["text": .string(text), "savedAt": .date(Date())])
        say("userActivityWillSave: saved the latest text")
    }

    func userActivityWasContinued(_ activity: UserActivity) async {
        say("userActivityWasContinued: the note is open on another host")
    }
}

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Wait for notes continued from other hosts and open them.")
    @OptionGroup var app: NotesEditor.AppOptions
    @Flag(help: "Exit after the first note is opened.") var once = false
    @Flag(name: .customLong("read-streams"), help: "Open the note's continuation streams and read its attachment.")
    var readStreams = false
    @Flag(name: .customLong("restore-state"), help: "Save the last note shown when quitting (also on SIGTERM) and show it again at the next start.")
    var restoreState = false

    func run() async throws {
        let viewer = NoteViewerDelegate(once: once, readStreams: readStreams, restoresState: restoreState, store: NoteStore(directory: app.store))
        let application = HandoffApplication(manifest: app.manifest, delegate: viewer)
        await application.registerStateRestoring(viewer.window, identifierPath: ["notes"])
        // SIGTERM ends run(), which saves the state: the default action would end the process at once.
        signal(SIGTERM, SIG_IGN)
        let terminated = AsyncStream.makeStream(of: Void.self)
        let signals = DispatchSource.makeSignalSource(signal: SIGTERM)
        signals.setEventHandler { terminated.continuation.yield() }
        signals.resume()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.run() }
            group.addTask { for await _ in terminated.stream { return } }
            try await application.waitUntilConnected()
            await application.registerRestorable(viewer.window, identifierPath: ["notes"])
            say("ready: \(app.bundleID) (team \(app.team)) continues \(NotesEditor.activityType)")
            group.addTask { await viewer.waitUntilDone() }
            try await group.next()
            group.cancelAll()
        }
    }
}

/// The continuing side: prints each callback, shows the note in its "window".
final class NoteViewerDelegate: HandoffApplicationDelegate {
    let once: Bool
    let readStreams: Bool
    let restoresState: Bool
    let store: NoteStore
    let window = NoteWindow()
    private let done = AsyncStream.makeStream(of: Void.self)

    init(once: Bool, readStreams: Bool, restoresState: Bool, store: NoteStore) {
        self.once = once
        self.readStreams = readStreams
        self.restoresState = restoresState
        self.store = store
    }

    func didFinishLaunching(options: LaunchOptions) async -> Bool {
        if let type = options.userActivityType { say("didFinishLaunching: started by the agent to continue \(type)") }
        return true
    }

    func shouldSaveApplicationState(coder: RestorationCoder) async -> Bool { restoresState }
    func shouldRestoreApplicationState(coder: RestorationCoder) async -> Bool { restoresState }

    func waitUntilDone() async {
        for await _ in done.stream { return }
    }

    func willContinueUserActivity(withType activityType: String) async -> Bool {
        say("willContinueUserActivity: \(activityType)")
        return false
    }

    /// An activity from another host carries the note's text. A link carries none: a note with a
    /// persistentIdentifier is read from this app's store, and one the store does not have is
    /// declined (false), so the agent opens the link's webpageURL instead.
    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
        say("continue: \"\(userActivity.title ?? "")\"")
        if userActivity.userInfo["text"] == nil, let id = userActivity.persistentIdentifier {
            guard let note = store.note(id: id) else {
                say("continue: no note \(id) in \(store.directory)")
                return false
            }
            userActivity.addUserInfoEntries(from: ["text": .string(note.text)])
            say("continue: note \(id) from the store")
        }
        restorationHandler([window])
        return true
    }

    func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async {
        say("didFailToContinueUserActivity: \(activityType): \(error)")
    }

    func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool {
        let text = url.isFileURL ? ((try? String(contentsOf: url, encoding: .utf8)) ?? "") : ""
        let source = sourceApplication == OpenRequest.commandLineSourceApplication ? "the CLI" : sourceApplication ?? "an unnamed sender"
        say("open: \(url.absoluteString) from \(source): \(text)")
        return true
    }

    func didUpdate(_ userActivity: UserActivity) async {
        say("didUpdate: the note is open")
        if readStreams { await readAttachment(of: userActivity) }
        if once { done.continuation.yield() }
    }

    /// Reads the attachment over the continuation streams and prints its size and SHA-256.
    func readAttachment(of activity: UserActivity) async {
        do {
            let streams = try await activity.getContinuationStreams()
            var hash = SHA256()
            var received = 0
            let start = ContinuousClock.now
            for try await chunk in streams.input {
                hash.update(data: chunk)
                received += chunk.count
            }
            let elapsed = ContinuousClock.now - start
            await streams.output.close()
            say("received \(received) bytes sha256 \(hash.finalize().map { String(format: "%02x", $0) }.joined()) in \(elapsed)")
        } catch {
            say("streams failed: \(error)")
        }
    }
}

/// Where a continued note is shown; the note shown last is its preserved state.
final class NoteWindow: UserActivityRestoring, StateRestoring {
    private let shown = Mutex<(title: String, text: String)?>(nil)

    func restoreUserActivityState(_ activity: UserActivity) async {
        let text: String
        if case .string(let value)? = activity.userInfo["text"] { text = value } else { text = "" }
        var line = "restoreUserActivityState: \"\(activity.title ?? "")\": \(text)"
        if case .date(let saved)? = activity.userInfo["savedAt"] { line += " (saved \(saved.formatted(.iso8601)))" }
        shown.withLock { $0 = (activity.title ?? "", text) }
        say(line)
    }

    func encodeRestorableState(with coder: RestorationCoder) async {
        guard let note = shown.withLock({ $0 }) else { return }
        coder.encode(note.title, forKey: "title")
        coder.encode(note.text, forKey: "text")
    }

    func decodeRestorableState(with coder: RestorationCoder) async {
        guard let title = coder.decodeString(forKey: "title") else { return }
        let text = coder.decodeString(forKey: "text") ?? ""
        shown.withLock { $0 = (title, text) }
        say("decodeRestorableState: the last note, \"\(title)\": \(text)")
    }
}

/// Deterministic bytes (a 64-bit xorshift sequence), so both hosts can agree on what was sent.
struct PatternGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed | 1 }

    mutating func fill(_ buffer: inout [UInt8], count: Int) {
        var state = self.state
        buffer.withUnsafeMutableBytes { raw in
            var i = 0
            while i + 8 <= count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                raw.storeBytes(of: state.littleEndian, toByteOffset: i, as: UInt64.self)
                i += 8
            }
            if i < count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                withUnsafeBytes(of: state.littleEndian) { word in
                    for j in 0..<(count - i) { raw[i + j] = word[j] }
                }
            }
        }
        self.state = state
    }
}
