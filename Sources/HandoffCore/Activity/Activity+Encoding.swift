#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An activity whose fields have the wrong types or values.
public struct ActivityDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field, such as `webpageURL`.
    public var field: String
    /// What is wrong.
    public var reason: String
    public var description: String { "activity field \(field): \(reason)" }
}

extension Activity {
    /// The activity as a property-list dictionary: the form that crosses the wire (without
    /// userInfo when `includingUserInfo` is false). Unset optional fields are left out.
    public func propertyList(includingUserInfo: Bool = true) -> [String: PropertyListValue] {
        var p: [String: PropertyListValue] = [
            "id": .uuid(id),
            "activityType": .string(activityType.rawValue),
            "needsSave": .bool(needsSave),
            "isEligibleForHandoff": .bool(isEligibleForHandoff),
            "isEligibleForSearch": .bool(isEligibleForSearch),
            "isEligibleForPublicIndexing": .bool(isEligibleForPublicIndexing),
            "isEligibleForPrediction": .bool(isEligibleForPrediction),
            "supportsContinuationStreams": .bool(supportsContinuationStreams),
        ]
        if includingUserInfo { p["userInfo"] = .dictionary(userInfo) }
        if let title { p["title"] = .string(title) }
        if let requiredUserInfoKeys { p["requiredUserInfoKeys"] = .array(requiredUserInfoKeys.sorted().map { .string($0) }) }
        if let targetContentIdentifier { p["targetContentIdentifier"] = .string(targetContentIdentifier) }
        if let contentAttributeSet { p["contentAttributeSet"] = .dictionary(contentAttributeSet) }
        if !keywords.isEmpty { p["keywords"] = .array(keywords.sorted().map { .string($0) }) }
        if let persistentIdentifier { p["persistentIdentifier"] = .string(persistentIdentifier) }
        if let expirationDate { p["expirationDate"] = .date(expirationDate) }
        if let webpageURL { p["webpageURL"] = .url(webpageURL) }
        if let referrerURL { p["referrerURL"] = .url(referrerURL) }
        return p
    }

    /// Reads an activity from its property-list form. `activityType` is required and validated;
    /// `id` is required unless `defaultID` is given; unknown keys are ignored (newer peers may
    /// send more).
    public init(propertyList p: [String: PropertyListValue], defaultID: UUID? = nil) throws(ActivityDecodingError) {
        func fail(_ field: String, _ reason: String) -> ActivityDecodingError { .init(field: field, reason: reason) }
        func string(_ key: String) throws(ActivityDecodingError) -> String? {
            switch p[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            case let other?: throw fail(key, "must be a string, not \(other.typeName)")
            }
        }
        func bool(_ key: String, _ defaultValue: Bool) throws(ActivityDecodingError) -> Bool {
            switch p[key] {
            case nil, .null?: return defaultValue
            case .bool(let b)?: return b
            case let other?: throw fail(key, "must be a bool, not \(other.typeName)")
            }
        }
        func url(_ key: String) throws(ActivityDecodingError) -> URL? {
            switch p[key] {
            case nil, .null?: return nil
            case .url(let u)?: return u
            case let other?: throw fail(key, "must be a URL, not \(other.typeName)")
            }
        }
        func strings(_ key: String) throws(ActivityDecodingError) -> Set<String>? {
            switch p[key] {
            case nil, .null?: return nil
            case .array(let a)?:
                var result: Set<String> = []
                for element in a {
                    guard case .string(let s) = element else { throw fail(key, "must be an array of strings") }
                    result.insert(s)
                }
                return result
            case let other?: throw fail(key, "must be an array of strings, not \(other.typeName)")
            }
        }
        func dictionary(_ key: String) throws(ActivityDecodingError) -> [String: PropertyListValue]? {
            switch p[key] {
            case nil, .null?: return nil
            case .dictionary(let d)?: return d
            case let other?: throw fail(key, "must be a dictionary, not \(other.typeName)")
            }
        }

        let resolvedID: UUID
        switch p["id"] {
        case .uuid(let u)?: resolvedID = u
        case nil where defaultID != nil: resolvedID = defaultID!
        case nil: throw fail("id", "is missing")
        case let other?: throw fail("id", "must be a UUID, not \(other.typeName)")
        }
        guard let typeText = try string("activityType") else { throw fail("activityType", "is missing") }
        let type: ActivityType
        do { type = try ActivityType(validating: typeText) } catch { throw fail("activityType", error.description) }
        let expiration: Date?
        switch p["expirationDate"] {
        case nil, .null?: expiration = nil
        case .date(let d)?: expiration = d
        case let other?: throw fail("expirationDate", "must be a date, not \(other.typeName)")
        }

        self.init(
            id: resolvedID,
            activityType: type,
            title: try string("title"),
            userInfo: try dictionary("userInfo") ?? [:],
            requiredUserInfoKeys: try strings("requiredUserInfoKeys"),
            targetContentIdentifier: try string("targetContentIdentifier"),
            needsSave: try bool("needsSave", false),
            contentAttributeSet: try dictionary("contentAttributeSet"),
            keywords: try strings("keywords") ?? [],
            persistentIdentifier: try string("persistentIdentifier"),
            isEligibleForHandoff: try bool("isEligibleForHandoff", true),
            isEligibleForSearch: try bool("isEligibleForSearch", false),
            isEligibleForPublicIndexing: try bool("isEligibleForPublicIndexing", false),
            isEligibleForPrediction: try bool("isEligibleForPrediction", false),
            expirationDate: expiration,
            webpageURL: try url("webpageURL"),
            referrerURL: try url("referrerURL"),
            supportsContinuationStreams: try bool("supportsContinuationStreams", false)
        )
    }

    /// Top-level fields whose JSON form is a plain string rather than a tagged object.
    private static let plainStringFields: [String: String] = [
        "id": "uuid", "webpageURL": "url", "referrerURL": "url", "expirationDate": "date",
    ]

    /// The activity as JSON, as handler commands read it on standard input: `id`, `webpageURL`,
    /// `referrerURL` and `expirationDate` are plain strings; userInfo and contentAttributeSet use
    /// the tagged JSON form of property lists.
    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        for (key, value) in propertyList() {
            switch value {
            case .uuid(let u): members[key] = .string(u.uuidString)
            case .url(let u): members[key] = .string(u.absoluteString)
            case .date(let d): members[key] = PropertyListValue.dateJSON(d)
            case .dictionary(let d): members[key] = d.userInfoJSON
            default: members[key] = value.json
            }
        }
        return .object(members)
    }

    /// Reads an activity from the JSON form of ``json``.
    public init(json: JSONValue, defaultID: UUID? = nil) throws(ActivityDecodingError) {
        guard case .object(let members) = json else {
            throw ActivityDecodingError(field: "", reason: "an activity must be a JSON object")
        }
        var p: [String: PropertyListValue] = [:]
        for (key, member) in members {
            if key == "expirationDate", let seconds = member.doubleValue {
                p[key] = .date(Date(timeIntervalSince1970: seconds))  // a date outside years 1...9999
                continue
            }
            if let kind = Self.plainStringFields[key], let text = member.stringValue {
                switch kind {
                case "uuid":
                    guard let u = UUID(uuidString: text) else { throw ActivityDecodingError(field: key, reason: "\"\(text)\" is not a UUID") }
                    p[key] = .uuid(u)
                case "url":
                    guard let u = URL(string: text), u.scheme != nil else {
                        throw ActivityDecodingError(field: key, reason: "\"\(text)\" is not an absolute URL such as https://example.com/page")
                    }
                    p[key] = .url(u)
                default:
                    if case .date(let d) = (try? PropertyListValue(json: .object(["$date": member]))) ?? .null {
                        p[key] = .date(d)
                        continue
                    }
                    guard let d = PropertyListValue.parseISO8601(text) else {
                        throw ActivityDecodingError(field: key, reason: "\"\(text)\" is not an ISO 8601 date")
                    }
                    p[key] = .date(d)
                }
                continue
            }
            if key == "userInfo" || key == "contentAttributeSet", case .object = member {
                do { p[key] = .dictionary(try UserInfo(userInfoJSON: member)) } catch {
                    throw ActivityDecodingError(field: error.path.isEmpty ? key : "\(key).\(error.path)", reason: error.reason)
                }
                continue
            }
            do { p[key] = try PropertyListValue(json: member) } catch {
                throw ActivityDecodingError(field: key, reason: error.description)
            }
        }
        try self.init(propertyList: p, defaultID: defaultID)
    }
}

/// The JSON form, like ``PropertyListValue``'s description: the default one prints
/// `expirationDate` with `Date.description`, which traps on a NaN date a peer can send.
extension Activity: CustomStringConvertible {
    public var description: String { json.serialized }
}
