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
    /// your app shows its own progress.
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
    func restorationObject(forIdentifierPath path: [String]) async -> (any UserActivityRestoring)?
}

extension HandoffApplicationDelegate {
    public func willContinueUserActivity(withType activityType: String) async -> Bool { false }
    public func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async {}
    public func didUpdate(_ userActivity: UserActivity) async {}
    public func restorationObject(forIdentifierPath path: [String]) async -> (any UserActivityRestoring)? { nil }
    public func open(_ url: URL, sourceApplication: String?, annotation: PropertyListValue?) async -> Bool { false }
}
