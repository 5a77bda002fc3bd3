#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a person is doing in an app, offered to their other hosts: the data of an NSUserActivity.
///
/// Every NSUserActivity property that carries data is here. The behaviour (`becomeCurrent()`,
/// the delegate, continuation streams) belongs to the app library; the agent moves this value.
public struct Activity: Sendable, Hashable, Identifiable {
    /// Identifies this activity while its agent holds it.
    public var id: UUID
    /// The reverse-DNS type, declared by the app.
    public var activityType: ActivityType
    /// A title a person can read.
    public var title: String?
    /// The state needed to continue; property-list values only.
    public var userInfo: UserInfo
    /// The keys needed to restore the state; nil means all keys. Only these keys are transferred.
    public var requiredUserInfoKeys: Set<String>?
    /// Identifies the content, to pick the right window or scene.
    public var targetContentIdentifier: String?
    /// The source app should update the activity (`userActivityWillSave`) before it is sent.
    public var needsSave: Bool
    /// Searchable attributes (Core Spotlight's attribute set), as property-list values.
    public var contentAttributeSet: [String: PropertyListValue]?
    /// Keywords for search.
    public var keywords: Set<String>
    /// A stable identifier of the content, the same on every device. A saved activity
    /// (`isEligibleForSearch`) is kept under it: a newer one of the same app with it replaces
    /// it, `deleteSavedUserActivities(withPersistentIdentifiers:)` and
    /// `handoff saved delete --persistent-id` delete it, `handoff search` shows it, and
    /// `handoff link` makes a lasting link from it that `continue` delivers to the app.
    public var persistentIdentifier: String?
    /// Whether the activity may be continued on another host.
    public var isEligibleForHandoff: Bool
    /// Whether the activity may be indexed for on-device search.
    public var isEligibleForSearch: Bool
    /// Whether the activity may be indexed publicly.
    public var isEligibleForPublicIndexing: Bool
    /// Whether the activity may be suggested as a prediction.
    public var isEligibleForPrediction: Bool
    /// After this date the activity is neither advertised nor continued.
    public var expirationDate: Date?
    /// Opened in a browser when no app continues the activity.
    public var webpageURL: URL?
    /// The URL of the page that led to this activity.
    public var referrerURL: URL?
    /// Whether the source app accepts continuation streams.
    public var supportsContinuationStreams: Bool

    /// Creates an activity with Apple's defaults: eligible for handoff, nothing else set.
    public init(
        id: UUID = UUID.random(),
        activityType: ActivityType,
        title: String? = nil,
        userInfo: UserInfo = [:],
        requiredUserInfoKeys: Set<String>? = nil,
        targetContentIdentifier: String? = nil,
        needsSave: Bool = false,
        contentAttributeSet: [String: PropertyListValue]? = nil,
        keywords: Set<String> = [],
        persistentIdentifier: String? = nil,
        isEligibleForHandoff: Bool = true,
        isEligibleForSearch: Bool = false,
        isEligibleForPublicIndexing: Bool = false,
        isEligibleForPrediction: Bool = false,
        expirationDate: Date? = nil,
        webpageURL: URL? = nil,
        referrerURL: URL? = nil,
        supportsContinuationStreams: Bool = false
    ) {
        self.id = id
        self.activityType = activityType
        self.title = title
        self.userInfo = userInfo
        self.requiredUserInfoKeys = requiredUserInfoKeys
        self.targetContentIdentifier = targetContentIdentifier
        self.needsSave = needsSave
        self.contentAttributeSet = contentAttributeSet
        self.keywords = keywords
        self.persistentIdentifier = persistentIdentifier
        self.isEligibleForHandoff = isEligibleForHandoff
        self.isEligibleForSearch = isEligibleForSearch
        self.isEligibleForPublicIndexing = isEligibleForPublicIndexing
        self.isEligibleForPrediction = isEligibleForPrediction
        self.expirationDate = expirationDate
        self.webpageURL = webpageURL
        self.referrerURL = referrerURL
        self.supportsContinuationStreams = supportsContinuationStreams
    }

    /// Merges entries into userInfo, replacing existing keys (NSUserActivity's
    /// `addUserInfoEntries(from:)`).
    public mutating func addUserInfoEntries(from entries: UserInfo) {
        userInfo.merge(entries) { _, new in new }
    }

    /// The userInfo that is transferred: only `requiredUserInfoKeys` when set, else all of it.
    public var transferredUserInfo: UserInfo {
        guard let required = requiredUserInfoKeys else { return userInfo }
        return userInfo.filter { required.contains($0.key) }
    }

    /// Whether the activity has expired at `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expirationDate else { return false }
        return expirationDate <= now
    }

    /// Whether the activity may be advertised and continued at `now`: eligible and not expired.
    public func isOffered(at now: Date) -> Bool { isEligibleForHandoff && !isExpired(at: now) }
}
