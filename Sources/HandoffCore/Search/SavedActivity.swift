#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An activity saved for search (`isEligibleForSearch`): what `handoff search` finds, on this
/// device or on a paired one. It carries what a person needs to recognise and reach the content,
/// never the userInfo.
public struct SavedActivity: ControlResult, Hashable {
    /// The app's stable identifier for the content, used to delete it
    /// (`deleteSavedUserActivities(withPersistentIdentifiers:)`).
    public var persistentIdentifier: String?
    public var activityType: String
    public var title: String?
    public var webpageURL: URL?
    /// Identifies the content within the app (a window, a document).
    public var targetContentIdentifier: String?
    public var keywords: [String]
    /// The app that saved it, or nil for `handoff publish`.
    public var bundleID: String?
    /// The device that saved it: this host's name, or the name this host stored when pairing.
    public var device: String
    public var savedAt: Date
    /// After this date the saved activity is gone (the activity's `expirationDate`).
    public var expirationDate: Date?
    /// The full-text rank: lower is a better match (SQLite's bm25).
    public var rank: Double

    public init(persistentIdentifier: String?, activityType: String, title: String?, webpageURL: URL?, targetContentIdentifier: String? = nil,
                keywords: [String] = [], bundleID: String? = nil, device: String, savedAt: Date, expirationDate: Date? = nil, rank: Double = 0) {
        (self.persistentIdentifier, self.activityType, self.title, self.webpageURL) = (persistentIdentifier, activityType, title, webpageURL)
        (self.targetContentIdentifier, self.keywords, self.bundleID, self.device) = (targetContentIdentifier, keywords, bundleID, device)
        (self.savedAt, self.expirationDate, self.rank) = (savedAt, expirationDate, rank)
    }

    public var json: JSONValue {
        var body: [String: JSONValue] = [
            "persistentIdentifier": persistentIdentifier.json, "activityType": .string(activityType), "title": title.json,
            "webpageURL": webpageURL.map { JSONValue.string($0.absoluteString) } ?? .null, "device": .string(device),
            "savedAt": .string(AgentEvent.timeText(savedAt)), "keywords": .array(keywords.map { .string($0) }),
            "rank": .double(rank),
        ]
        if let targetContentIdentifier { body["targetContentIdentifier"] = .string(targetContentIdentifier) }
        if let bundleID { body["bundleID"] = .string(bundleID) }
        if let expirationDate { body["expirationDate"] = .string(AgentEvent.timeText(expirationDate)) }
        return .object(body)
    }

    public init(json: JSONValue) {
        self.init(persistentIdentifier: json.optionalText("persistentIdentifier"), activityType: json.text("activityType"),
                  title: json.optionalText("title"), webpageURL: json.optionalText("webpageURL").flatMap(URL.init(string:)),
                  targetContentIdentifier: json.optionalText("targetContentIdentifier"),
                  keywords: json["keywords"]?.arrayValue?.compactMap(\.stringValue) ?? [], bundleID: json.optionalText("bundleID"),
                  device: json.text("device"), savedAt: json.optionalText("savedAt").flatMap(AgentEvent.parseTime) ?? Date(timeIntervalSince1970: 0),
                  expirationDate: json.optionalText("expirationDate").flatMap(AgentEvent.parseTime), rank: json["rank"]?.doubleValue ?? 0)
    }
}

/// `search`: the saved activities that match, best first, and the devices that could not be
/// asked.
public struct SearchResult: ControlResult, Equatable {
    public var results: [SavedActivity]
    /// Paired devices that were asked and did not answer, with why.
    public var unreachable: [String: String]

    public init(results: [SavedActivity], unreachable: [String: String] = [:]) {
        (self.results, self.unreachable) = (results, unreachable)
    }

    public var json: JSONValue {
        .object(["results": results.json, "unreachable": .object(unreachable.mapValues { .string($0) })])
    }

    public init(json: JSONValue) {
        self.init(results: [SavedActivity](json: json["results"] ?? .array([])),
                  unreachable: json["unreachable"]?.objectValue?.compactMapValues(\.stringValue) ?? [:])
    }
}

/// `deleteSaved`: how many saved activities were deleted.
public struct DeleteSavedResult: ControlResult, Equatable {
    public var deleted: Int

    public init(deleted: Int) { self.deleted = deleted }

    public var json: JSONValue { .object(["deleted": .integer(Int64(deleted))]) }

    public init(json: JSONValue) { self.init(deleted: json.number("deleted")) }
}
