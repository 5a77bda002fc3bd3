/// Who an app is: its bundle ID and its developer team ID.
public struct AppIdentity: Sendable, Hashable, CustomStringConvertible {
    /// Reverse-DNS bundle ID, such as `com.example.notes`.
    public var bundleID: String
    /// The developer team ID. Activities go only to apps of the source app's team.
    public var teamID: String

    public init(bundleID: String, teamID: String) {
        self.bundleID = bundleID
        self.teamID = teamID
    }

    public var description: String { "\(bundleID) (team \(teamID))" }

    /// Whether `text` is a reverse-DNS bundle ID, such as `com.example.notes` (the syntax of an
    /// activity type).
    public static func isValidBundleID(_ text: String) -> Bool { ActivityType(rawValue: text) != nil }
}

/// What an app declares to its agent: its identity and the activity types it continues (the
/// `NSUserActivityTypes` of an Info.plist).
public struct AppManifest: Sendable, Hashable {
    public var identity: AppIdentity
    /// The activity types the app can continue.
    public var activityTypes: [ActivityType]

    public init(bundleID: String, teamID: String, activityTypes: [ActivityType]) {
        self.identity = AppIdentity(bundleID: bundleID, teamID: teamID)
        self.activityTypes = activityTypes
    }

    /// Whether the app may receive an activity of this type published by an app of `sourceTeam`:
    /// it declares the type and belongs to the same team. Activities without a source team (from
    /// the CLI) go to no app.
    public func accepts(_ type: ActivityType, fromTeam sourceTeam: String?) -> Bool {
        guard let sourceTeam, sourceTeam == identity.teamID else { return false }
        return activityTypes.contains(type)
    }

    /// Why the app may not publish an activity of `type`, or nil when it may: an app publishes
    /// only the types it declares (`NSUserActivityTypes`), as on Apple's platforms.
    /// `NSUserActivityTypeBrowsingWeb` needs no declaration: it is Apple's own type, which no
    /// app declares there either; a peer opens its webpageURL when no app continues it.
    public func publishRefusal(_ type: ActivityType) -> String? {
        guard type != .browsingWeb, !activityTypes.contains(type) else { return nil }
        let declared = activityTypes.isEmpty ? "none" : activityTypes.map(\.rawValue).joined(separator: ", ")
        return "the app \(identity.bundleID) may not publish activities of type \(type): its manifest declares only "
            + "\(declared). Add \"\(type)\" to activityTypes in the manifest it registers with (HandoffApplication's "
            + "AppManifest, and its file in appsDirectory)"
    }

    /// The JSON form: `{"bundleID", "teamID", "activityTypes": [...]}`.
    public var json: JSONValue {
        .object([
            "bundleID": .string(identity.bundleID), "teamID": .string(identity.teamID),
            "activityTypes": .array(activityTypes.map { .string($0.rawValue) }),
        ])
    }

    /// Reads and checks the JSON form.
    public init(json: JSONValue) throws(AppManifestError) {
        guard let bundleID = json["bundleID"]?.stringValue, ActivityType(rawValue: bundleID) != nil else {
            throw AppManifestError("bundleID must be reverse-DNS, such as com.example.notes")
        }
        guard let teamID = json["teamID"]?.stringValue, !teamID.isEmpty, teamID.utf8.count <= 64,
            teamID.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else { throw AppManifestError("teamID must be 1 to 64 ASCII letters and digits, such as A1B2C3D4E5") }
        guard let typeValues = json["activityTypes"]?.arrayValue else { throw AppManifestError("activityTypes must be an array of activity types") }
        var types: [ActivityType] = []
        for value in typeValues {
            guard let text = value.stringValue else { throw AppManifestError("activityTypes must hold strings") }
            do { types.append(try ActivityType(validating: text)) } catch { throw AppManifestError("activityTypes: \(error)") }
        }
        self.init(bundleID: bundleID, teamID: teamID, activityTypes: types)
    }
}

/// An app manifest that cannot be used.
public struct AppManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "invalid app manifest: \(reason)" }
}
