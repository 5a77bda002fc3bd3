#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why the agent started an app (UIApplication's launch options): to continue an activity
/// (`.userActivityDictionary`: its type and the continuation), or to open a URL or a file
/// (`.url`, `.sourceApplication`, `.annotation`). Empty when the app was started some other way.
///
/// The agent hands them to the app in its `registerApp` answer (`launchOptions`), so the
/// activity's details stay out of the process environment.
public struct LaunchOptions: Sendable, Equatable {
    /// The type of the activity the app was started to continue.
    public var userActivityType: String?
    /// The continuation the app was started for: its `continue` event carries this ID.
    public var continuationID: UUID?
    /// The URL the app was started to open; nil for a file, whose Inbox URL is known only when
    /// its `openURL` arrives.
    public var url: URL?
    /// Whether the app was started to open something sent with `handoff open` (a URL or a file).
    public var opensResource: Bool
    /// The sending app's bundle ID, for an open.
    public var sourceApplication: String?
    /// The sender's annotation, for an open.
    public var annotation: PropertyListValue?

    public init(userActivityType: String? = nil, continuationID: UUID? = nil, url: URL? = nil, opensResource: Bool = false,
                sourceApplication: String? = nil, annotation: PropertyListValue? = nil) {
        self.userActivityType = userActivityType
        self.continuationID = continuationID
        self.url = url
        self.opensResource = opensResource || url != nil
        self.sourceApplication = sourceApplication
        self.annotation = annotation
    }

    /// Options for an app started to continue a continuation of this type.
    public static func continuing(_ activityType: String, continuationID: UUID) -> LaunchOptions {
        LaunchOptions(userActivityType: activityType, continuationID: continuationID)
    }

    /// No reason: the app was not started by the agent for something.
    public static let none = LaunchOptions()

    /// The error the continuing (or sending) side gets when the app started for it declined the
    /// launch (a launch hook returned false, so no `continue` or `openURL` was delivered): 4608.
    public static func declined(by bundleID: String) -> HandoffError {
        .handoffFailed("the app \(bundleID) declined to continue: it was started for this and its launch hook (willFinishLaunching or didFinishLaunching) returned false")
    }

    /// Whether the launch was for a continuation or an open, so the launch hooks' answers count.
    public var hasReason: Bool { userActivityType != nil || opensResource }

    /// The wire form: `{"userActivityType", "continuationID", "url", "opensResource", "sourceApplication", "annotation"}`,
    /// each only when set.
    public var json: JSONValue {
        var body: [String: JSONValue] = [:]
        if let userActivityType { body["userActivityType"] = .string(userActivityType) }
        if let continuationID { body["continuationID"] = .string(continuationID.uuidString) }
        if let url { body["url"] = .string(url.absoluteString) }
        if opensResource { body["opensResource"] = .bool(true) }
        if let sourceApplication { body["sourceApplication"] = .string(sourceApplication) }
        if let annotation { body["annotation"] = annotation.json }
        return .object(body)
    }

    /// Reads the wire form; unknown or malformed fields are left out.
    public init(json: JSONValue) {
        self.init(userActivityType: json["userActivityType"]?.stringValue,
                  continuationID: json["continuationID"]?.stringValue.flatMap(UUID.init(uuidString:)),
                  url: json["url"]?.stringValue.flatMap(URL.init(string:)),
                  opensResource: json["opensResource"]?.boolValue == true,
                  sourceApplication: json["sourceApplication"]?.stringValue,
                  annotation: json["annotation"].flatMap { try? PropertyListValue(json: $0) })
    }
}
