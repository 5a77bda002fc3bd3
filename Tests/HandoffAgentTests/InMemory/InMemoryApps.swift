import Foundation
import HandoffCore
import HandoffKit
import Synchronization

/// The notes app of the in-memory tests: the same manifest on every host.
enum NotesApp {
    static let type = "com.example.notes.edit"
    static let manifest = AppManifest(bundleID: "com.example.notes", teamID: "A1B2C3D4E5", activityTypes: [ActivityType(rawValue: type)!])
}

/// What an app's delegates were told, in order: the continuing side's callbacks and the
/// activities' (`userActivityWillSave`, `userActivityWasContinued`).
final class AppRecorder: HandoffApplicationDelegate, UserActivityDelegate {
    enum Event: Sendable, Equatable {
        case willContinue(String)
        case continued(title: String?, userInfo: [String: PropertyListValue])
        case didFail(String, code: Int)
        case didUpdate
        case opened(URL, sourceApplication: String?)
        case willSave
        case wasContinued
    }

    private let recorded = Mutex<[Event]>([])
    /// Whether `continue` and `open` report the activity or URL handled.
    let handles: Bool
    /// What `userActivityWillSave` writes into the activity before it is sent.
    let savedTitle: String?

    init(handles: Bool = true, savedTitle: String? = nil) {
        self.handles = handles
        self.savedTitle = savedTitle
    }

    private let continuedActivity = Mutex<UserActivity?>(nil)

    var events: [Event] { recorded.withLock { $0 } }
    /// The activity `continue` was last given (its continuation streams can be asked for).
    var continued: UserActivity? { continuedActivity.withLock { $0 } }

    private func record(_ event: Event) { recorded.withLock { $0.append(event) } }

    func willContinueUserActivity(withType activityType: String) async -> Bool {
        record(.willContinue(activityType))
        return false
    }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
        record(.continued(title: userActivity.title, userInfo: userActivity.userInfo))
        continuedActivity.withLock { $0 = userActivity }
        return handles
    }

    func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async {
        record(.didFail(activityType, code: error.code.rawValue))
    }

    func didUpdate(_ userActivity: UserActivity) async { record(.didUpdate) }

    func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool {
        record(.opened(url, sourceApplication: sourceApplication))
        return handles
    }

    func restorationObject(forIdentifierPath path: [String]) async -> (any UserActivityRestoring)? { nil }

    func userActivityWillSave(_ activity: UserActivity) async {
        record(.willSave)
        if let savedTitle { activity.title = savedTitle }
    }

    func userActivityWasContinued(_ activity: UserActivity) async { record(.wasContinued) }

    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        await outputStream.close()
    }
}

/// Yields until `condition` holds (no sleeping: everything in memory moves on yields). Returns
/// whether it held. It gives up after `maximumYields` yields, and not before `patience` has passed
/// on the wall clock: on a loaded machine the threads that carry the in-memory frames may not run
/// during a burst of yields. A condition that holds returns at once, so the wall clock bounds
/// only a failure.
func eventually(maximumYields: Int = 200_000, patience: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let start = clock.now
    var yields = 0
    while yields < maximumYields || clock.now - start < patience {
        if await condition() { return true }
        await Task.yield()
        yields += 1
    }
    return await condition()
}
