import Foundation
import HandoffAgent
import HandoffKit
import Synchronization

/// An app delegate for state restoration and launch tests: it records the launch and
/// restoration callbacks (and the continuation ones) in a ``CallLog``, with the answers it is
/// told to give.
final class RestoringAppDelegate: HandoffApplicationDelegate {
    let name: String
    let log: CallLog
    let saves: Bool
    let restores: Bool
    let acceptsLaunch: Bool
    private let options = Mutex<LaunchOptions?>(nil)

    init(_ name: String, log: CallLog, saves: Bool = true, restores: Bool = true, acceptsLaunch: Bool = true) {
        (self.name, self.log, self.saves, self.restores, self.acceptsLaunch) = (name, log, saves, restores, acceptsLaunch)
    }

    /// The options the last launch hook received.
    var launchOptions: LaunchOptions? { options.withLock { $0 } }

    func willFinishLaunching(options: LaunchOptions) async -> Bool {
        self.options.withLock { $0 = options }
        log.add("\(name):willFinishLaunching")
        return true
    }

    func didFinishLaunching(options: LaunchOptions) async -> Bool {
        log.add("\(name):didFinishLaunching")
        return acceptsLaunch
    }

    func shouldSaveApplicationState(coder: RestorationCoder) async -> Bool {
        log.add("\(name):shouldSave")
        return saves
    }

    func shouldRestoreApplicationState(coder: RestorationCoder) async -> Bool {
        log.add("\(name):shouldRestore")
        return restores
    }

    func willEncodeRestorableState(with coder: RestorationCoder) async {
        coder.encode(name, forKey: "savedBy")
        log.add("\(name):willEncode")
    }

    func didDecodeRestorableState(with coder: RestorationCoder) async {
        log.add("\(name):didDecode:\(coder.decodeString(forKey: "savedBy") ?? "-")")
    }

    func willContinueUserActivity(withType activityType: String) async -> Bool {
        log.add("\(name):willContinue")
        return false
    }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
        log.add("\(name):continue:\(userActivity.title ?? "")")
        return true
    }

    func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async {
        log.add("\(name):didFail")
    }

    func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool {
        log.add("\(name):open:\(url.absoluteString)")
        return true
    }
}

/// A restorable object: a draft whose text is preserved.
final class Draft: StateRestoring {
    let name: String
    let log: CallLog
    private let state: Mutex<String>

    init(_ name: String, log: CallLog, text: String = "") {
        self.name = name
        self.log = log
        self.state = Mutex(text)
    }

    var text: String { state.withLock { $0 } }

    func encodeRestorableState(with coder: RestorationCoder) async {
        coder.encode(text, forKey: "text")
        coder.encode(3.5, forKey: "zoom")
    }

    func decodeRestorableState(with coder: RestorationCoder) async {
        let text = coder.decodeString(forKey: "text") ?? ""
        state.withLock { $0 = text }
        log.add("\(name):decode:\(text):\(coder.decodeInteger(forKey: "text") == nil ? "typed" : "untyped")")
    }
}

/// A temporary directory for one test's state files.
func temporaryStateDirectory() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hk-state-\(UUID().uuidString.prefix(8))").path
    // Mode 0700: the library saves state only in a directory private to the user.
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return dir
}

/// Runs `app` until `body` returns, then stops it (its run() ends, saving its state) and waits.
func whileRunning(_ app: HandoffApplication, _ body: () async throws -> Void) async throws {
    let task = Task { try await app.run() }
    try await app.waitUntilConnected()
    do { try await body() } catch {
        task.cancel()
        _ = await task.result
        throw error
    }
    task.cancel()
    _ = await task.result
}

/// Waits (at most about 5 s) until `log` holds `entry`.
func waitFor(_ entry: String, in log: CallLog) async throws {
    for _ in 0..<500 where !log.all.contains(entry) { try await Task.sleep(for: .milliseconds(10)) }
}
