import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a person is doing in your app, offered to their other hosts: the counterpart of
/// NSUserActivity.
///
/// Set the properties, then call ``becomeCurrent()``; the local agent advertises the activity
/// until ``resignCurrent()`` or ``invalidate()``, or until your app's ``HandoffApplication``
/// stops. Properties are safe to read and write from any task.
public final class UserActivity: Sendable, CustomStringConvertible {
    private let state: Mutex<State>

    private struct State {
        var activity: Activity?
        var activityType: String
        var fields: Activity
        var isCurrent = false
        var isInvalidated = false
        weak var delegate: (any UserActivityDelegate)?
    }

    /// The application that publishes it: the one given at creation, else the running one.
    private let application: HandoffApplication?

    /// Creates an activity of a type your app declares in its manifest (reverse-DNS, such as
    /// `com.example.notes.edit`). An invalid type is reported by ``becomeCurrent()``.
    /// - Parameter application: the application that publishes it; by default the one running
    ///   in this process.
    public init(activityType: String, application: HandoffApplication? = nil) {
        let placeholder = Activity(activityType: ActivityType(rawValue: activityType) ?? .browsingWeb)
        state = Mutex(State(activityType: activityType, fields: placeholder))
        self.application = application
        self.continuationID = nil
    }

    /// The continuation that delivered this activity here, for its continuation streams.
    private let continuationID: UUID?

    /// An activity received from another host.
    init(continuing activity: Activity, continuationID: UUID?, application: HandoffApplication) {
        state = Mutex(State(activityType: activity.activityType.rawValue, fields: activity))
        self.application = application
        self.continuationID = continuationID
    }

    private func read<T>(_ body: (Activity) -> T) -> T { state.withLock { body($0.fields) } }
    private func write(_ body: (inout Activity) -> Void) { state.withLock { body(&$0.fields) } }

    /// The identifier of the published activity (stable for this object).
    public var identifier: UUID { read(\.id) }
    /// The activity type.
    public var activityType: String { state.withLock { $0.activityType } }
    /// A title a person can read.
    public var title: String? { get { read(\.title) } set { write { $0.title = newValue } } }
    /// The state needed to continue; property-list values only. Apple recommends 3 KB or less.
    public var userInfo: [String: PropertyListValue] { get { read(\.userInfo) } set { write { $0.userInfo = newValue } } }
    /// The keys needed to restore the state; nil means all keys. Only these are transferred.
    public var requiredUserInfoKeys: Set<String>? { get { read(\.requiredUserInfoKeys) } set { write { $0.requiredUserInfoKeys = newValue } } }
    /// Identifies the content, to pick the right window or scene.
    public var targetContentIdentifier: String? { get { read(\.targetContentIdentifier) } set { write { $0.targetContentIdentifier = newValue } } }
    /// A stable identifier of the content, the same on every device: the key of the saved
    /// activity (``isEligibleForSearch``) that ``deleteSavedUserActivities(withPersistentIdentifiers:)``
    /// deletes, and what a lasting link (`handoff link`) carries back to ``HandoffApplicationDelegate/continue(_:restorationHandler:)``.
    public var persistentIdentifier: String? { get { read(\.persistentIdentifier) } set { write { $0.persistentIdentifier = newValue } } }
    /// Keywords for search.
    public var keywords: Set<String> { get { read(\.keywords) } set { write { $0.keywords = newValue } } }
    /// Searchable attributes.
    public var contentAttributeSet: [String: PropertyListValue]? { get { read(\.contentAttributeSet) } set { write { $0.contentAttributeSet = newValue } } }
    /// After this date the activity is neither advertised nor continued.
    public var expirationDate: Date? { get { read(\.expirationDate) } set { write { $0.expirationDate = newValue } } }
    /// Whether the activity may be continued on another host (default true).
    public var isEligibleForHandoff: Bool { get { read(\.isEligibleForHandoff) } set { write { $0.isEligibleForHandoff = newValue } } }
    /// Whether the activity may be indexed for on-device search.
    public var isEligibleForSearch: Bool { get { read(\.isEligibleForSearch) } set { write { $0.isEligibleForSearch = newValue } } }
    /// Whether the activity may be indexed publicly.
    public var isEligibleForPublicIndexing: Bool { get { read(\.isEligibleForPublicIndexing) } set { write { $0.isEligibleForPublicIndexing = newValue } } }
    /// Whether the activity may be suggested as a prediction.
    public var isEligibleForPrediction: Bool { get { read(\.isEligibleForPrediction) } set { write { $0.isEligibleForPrediction = newValue } } }
    /// Opened in a browser when no app continues the activity.
    public var webpageURL: URL? { get { read(\.webpageURL) } set { write { $0.webpageURL = newValue } } }
    /// The URL of the page that led to this activity.
    public var referrerURL: URL? { get { read(\.referrerURL) } set { write { $0.referrerURL = newValue } } }
    /// When true, the delegate's ``UserActivityDelegate/userActivityWillSave(_:)`` runs before the
    /// activity is sent to a continuing host; it is reset after each save.
    public var needsSave: Bool { get { read(\.needsSave) } set { write { $0.needsSave = newValue } } }
    /// Whether this app accepts continuation streams for the activity.
    public var supportsContinuationStreams: Bool { get { read(\.supportsContinuationStreams) } set { write { $0.supportsContinuationStreams = newValue } } }
    /// Receives the activity's callbacks; held weakly.
    public var delegate: (any UserActivityDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }
    /// Whether the activity is current (published by ``becomeCurrent()``).
    public var isCurrent: Bool { state.withLock { $0.isCurrent } }

    /// Merges entries into userInfo, replacing existing keys.
    public func addUserInfoEntries(from entries: [String: PropertyListValue]) {
        write { $0.addUserInfoEntries(from: entries) }
    }

    /// The activity's data as the agent moves it.
    public var snapshot: Activity { read { $0 } }

    /// Makes the activity current: the agent advertises it to your other hosts. Call it again
    /// after changing properties to update what is offered.
    public func becomeCurrent() async throws(HandoffError) {
        let (typeText, invalidated) = state.withLock { ($0.activityType, $0.isInvalidated) }
        guard !invalidated else { throw .handoffFailed("this activity was invalidated; create a new UserActivity") }
        let type: ActivityType
        do { type = try ActivityType(validating: typeText) } catch { throw .handoffFailed("\(error)") }
        write { $0.activityType = type }
        try await publisher().publish(self)
        state.withLock { $0.isCurrent = true }
    }

    /// Stops offering the activity; it can become current again.
    public func resignCurrent() async throws(HandoffError) {
        guard state.withLock({ $0.isCurrent }) else { return }
        try await publisher().resign(self)
        state.withLock { $0.isCurrent = false }
    }

    /// Opens continuation streams to the app that published this activity (on the continuing
    /// host, for an activity received in `continue`, when its `supportsContinuationStreams` is
    /// set). The source app's delegate gets ``UserActivityDelegate/userActivity(_:didReceive:outputStream:)``.
    public func getContinuationStreams() async throws(HandoffError) -> ContinuationStreams {
        guard let continuationID, let application else {
            throw .handoffFailed("only an activity received in continue(_:restorationHandler:) has continuation streams")
        }
        guard supportsContinuationStreams else {
            throw .connectionUnavailable("the source app does not support continuation streams for \(activityType)")
        }
        return try await application.openStreams(.openStreams(continuationID: continuationID)).get()
    }

    /// NSUserActivity's callback form of ``getContinuationStreams()``.
    public func getContinuationStreams(
        completionHandler: @escaping @Sendable (ContinuationInputStream?, ContinuationOutputStream?, HandoffError?) -> Void
    ) {
        Task {
            do throws(HandoffError) {
                let streams = try await getContinuationStreams()
                completionHandler(streams.input, streams.output, nil)
            } catch {
                completionHandler(nil, nil, error)
            }
        }
    }

    private func publisher() throws(HandoffError) -> HandoffApplication {
        if let application { return application }
        return try HandoffApplication.running()
    }

    /// Stops offering the activity for good.
    public func invalidate() async {
        try? await resignCurrent()
        state.withLock { $0.isInvalidated = true }
    }

    public var description: String { "UserActivity(\(activityType), \(title ?? "untitled"))" }
}

/// The source side's callbacks for one activity (NSUserActivityDelegate).
public protocol UserActivityDelegate: AnyObject, Sendable {
    /// Update the activity's state now: a host is about to continue it (called when
    /// ``UserActivity/needsSave`` is true). Answer within the agent's `limits.fetchTimeout`, or
    /// the continuing host gets 4610.
    func userActivityWillSave(_ activity: UserActivity) async
    /// Another host continued the activity.
    func userActivityWasContinued(_ activity: UserActivity) async
    /// The continuing app opened continuation streams. Read and write them here; close the
    /// output when done.
    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async
}

extension UserActivityDelegate {
    public func userActivityWillSave(_ activity: UserActivity) async {}
    public func userActivityWasContinued(_ activity: UserActivity) async {}
    public func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        await outputStream.close()
    }
}

/// An object that restores its state from a continued activity (a view or document, say).
public protocol UserActivityRestoring: AnyObject, Sendable {
    /// Restore from the activity.
    func restoreUserActivityState(_ activity: UserActivity) async
}
