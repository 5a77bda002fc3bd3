import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hands continued activities to your objects, after ``HandoffApplicationDelegate/continue(_:restorationHandler:)``.
public typealias RestorationHandler = @Sendable ([any UserActivityRestoring]) -> Void

/// The continuing side's callbacks (UIApplicationDelegate / NSApplicationDelegate's user-activity
/// methods).
///
/// Calls come one at a time, in the order of the lifecycle, each awaited before the next. They run
/// on the delegate's own isolation: make the delegate `@MainActor`, or an actor on an executor of
/// your choosing, to pick where.
public protocol HandoffApplicationDelegate: AnyObject, Sendable {
    /// A continuation of this type has begun; the data may not have arrived yet. Return true if
    /// your app tells the person itself that continuing is under way: the agent then shows no
    /// "Continuing…" desktop notification of its own for it. Return false (the default) to let
    /// the agent show it.
    func willContinueUserActivity(withType activityType: String) async -> Bool
    /// Continue the activity. Return true if you handled it. Call `restorationHandler` with the
    /// objects that should restore from it (they get ``UserActivityRestoring/restoreUserActivityState(_:)``).
    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool
    /// A continuation of this type failed; `error` carries the NSUserActivity code.
    func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async
    /// The activity was continued and restored.
    func didUpdate(_ userActivity: UserActivity) async
    /// Another host sent a URL or a file. A file URL (`url.isFileURL`) is always a file the
    /// agent received and wrote to this app's Inbox, which the app may read and delete: the agent
    /// never passes on a `file:` URL from another device. Any other URL is the sender's, to be
    /// treated as untrusted input. `sourceApplication` is the sending app's bundle ID as the
    /// paired device's agent registered it (nil from the CLI), `annotation` a property list from
    /// the sender. Return true if handled.
    func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool
    /// The object for a path of restoration identifiers (from the root down), or nil to let the
    /// library use one registered with ``HandoffApplication/registerRestorable(_:identifierPath:)``.
    /// Asked when a continued activity's `targetContentIdentifier` names the path.
    func restorationObject(forIdentifierPath path: [String]) async -> (any UserActivityRestoring)?

    // MARK: Launching (UIApplicationDelegate's launch methods)

    /// The app is starting; `options` say why the agent started it (empty when it did not).
    /// Called inside ``HandoffApplication/run()`` once the app is registered, before state
    /// restoration. Return false to refuse the continuation or open it was started for: it is
    /// then not delivered, and the other side gets error 4608. Default: true.
    func willFinishLaunching(options: LaunchOptions) async -> Bool
    /// The app has started and its state is restored; no event has been delivered yet. Return
    /// false as with ``willFinishLaunching(options:)``. Default: true.
    func didFinishLaunching(options: LaunchOptions) async -> Bool

    // MARK: State preservation and restoration (opt-in, as in UIKit)

    /// Whether to save the app's state now (it quits, or called
    /// ``HandoffApplication/saveApplicationState()``). Default: false.
    func shouldSaveApplicationState(coder: RestorationCoder) async -> Bool
    /// Whether to restore the state saved last time; `coder` holds it. Default: false.
    func shouldRestoreApplicationState(coder: RestorationCoder) async -> Bool
    /// Saving begins: encode app-wide state into `coder` (the root); the registered objects
    /// encode into nested coders after this.
    func willEncodeRestorableState(with coder: RestorationCoder) async
    /// Restoring ended: every object has decoded its state; read app-wide state from `coder`.
    func didDecodeRestorableState(with coder: RestorationCoder) async
    /// The object to restore for a path of restoration identifiers found in the archive, given
    /// its nested coder (create it here if it does not exist yet), or nil to use the one
    /// registered with ``HandoffApplication/registerStateRestoring(_:identifierPath:)``. The
    /// default returns ``restorationObject(forIdentifierPath:)``'s object when that also
    /// conforms to ``StateRestoring``, so one lookup can serve continuation and restoration.
    func restorationObject(forIdentifierPath path: [String], coder: RestorationCoder) async -> (any StateRestoring)?
}

extension HandoffApplicationDelegate {
    public func willContinueUserActivity(withType activityType: String) async -> Bool { false }
    public func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async {}
    public func didUpdate(_ userActivity: UserActivity) async {}
    public func restorationObject(forIdentifierPath path: [String]) async -> (any UserActivityRestoring)? { nil }
    public func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool { false }
    public func willFinishLaunching(options: LaunchOptions) async -> Bool { true }
    public func didFinishLaunching(options: LaunchOptions) async -> Bool { true }
    public func shouldSaveApplicationState(coder: RestorationCoder) async -> Bool { false }
    public func shouldRestoreApplicationState(coder: RestorationCoder) async -> Bool { false }
    public func willEncodeRestorableState(with coder: RestorationCoder) async {}
    public func didDecodeRestorableState(with coder: RestorationCoder) async {}
    public func restorationObject(forIdentifierPath path: [String], coder: RestorationCoder) async -> (any StateRestoring)? {
        await restorationObject(forIdentifierPath: path) as? any StateRestoring
    }
}
