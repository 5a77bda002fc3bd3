#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A paired device's question on the peer protocol: its saved activities that match `query`
/// (`handoff search --devices all`). Answered with a `searchResults` frame.
public struct PeerSearchRequest: Sendable, Hashable {
    /// The longest query accepted, in UTF-8 bytes.
    public static let maximumQueryBytes = 1024
    /// The most results one device returns.
    public static let maximumLimit = 100

    public var query: String
    public var limit: Int

    public init(query: String, limit: Int) {
        self.query = query
        self.limit = limit
    }

    var propertyList: [String: PropertyListValue] { ["query": .string(query), "limit": .integer(Int64(limit))] }

    init(fields: UserInfo) throws(FrameError) {
        guard case .string(let query)? = fields["query"], !query.isEmpty, query.utf8.count <= Self.maximumQueryBytes else {
            throw .malformed(kind: .searchRequest, reason: "query must be 1 to \(Self.maximumQueryBytes) bytes")
        }
        guard case .integer(let limit)? = fields["limit"], (1...Int64(Self.maximumLimit)).contains(limit) else {
            throw .malformed(kind: .searchRequest, reason: "limit must be 1 to \(Self.maximumLimit)")
        }
        self.init(query: query, limit: Int(limit))
    }
}

/// The answer to a ``PeerSearchRequest``: saved activities, best first. The device is not sent:
/// the asking agent names each result by the name it stored when pairing.
public enum PeerSearchResults {
    /// The results as a frame payload of at most `maxBytes`: the worst-ranked results are left
    /// out until it fits.
    public static func payload(_ results: [SavedActivity], maxBytes: Int) -> [UInt8] {
        var kept = results
        while true {
            let payload = PropertyListBinaryCoding.encode(["results": .array(kept.map { .dictionary(propertyList($0)) })])
            if payload.count <= maxBytes || kept.isEmpty { return payload }
            kept.removeLast(max(1, kept.count / 4))
        }
    }

    static func propertyList(_ result: SavedActivity) -> [String: PropertyListValue] {
        var fields: [String: PropertyListValue] = [
            "activityType": .string(result.activityType), "keywords": .array(result.keywords.map { .string($0) }),
            "savedAt": .date(result.savedAt), "rank": .double(result.rank),
        ]
        if let value = result.persistentIdentifier { fields["persistentIdentifier"] = .string(value) }
        if let value = result.title { fields["title"] = .string(value) }
        if let value = result.webpageURL { fields["webpageURL"] = .url(value) }
        if let value = result.targetContentIdentifier { fields["targetContentIdentifier"] = .string(value) }
        if let value = result.bundleID { fields["bundleID"] = .string(value) }
        if let value = result.expirationDate { fields["expirationDate"] = .date(value) }
        return fields
    }

    /// Reads the results of a `searchResults` frame; every device field is `device`.
    static func decode(_ fields: UserInfo) throws(FrameError) -> [SavedActivity] {
        func malformed(_ reason: String) -> FrameError { .malformed(kind: .searchResults, reason: reason) }
        guard case .array(let entries)? = fields["results"] else { throw malformed("missing results") }
        var results: [SavedActivity] = []
        for entry in entries {
            guard case .dictionary(let f) = entry, case .string(let type)? = f["activityType"], case .date(let savedAt)? = f["savedAt"] else {
                throw malformed("a result needs activityType and savedAt")
            }
            func text(_ key: String) -> String? { if case .string(let s)? = f[key] { s } else { nil } }
            var keywords: [String] = []
            if case .array(let words)? = f["keywords"] { keywords = words.compactMap { if case .string(let s) = $0 { s } else { nil } } }
            var url: URL?
            if case .url(let u)? = f["webpageURL"] { url = u }
            var expiration: Date?
            if case .date(let d)? = f["expirationDate"] { expiration = d }
            var rank = 0.0
            if case .double(let r)? = f["rank"], r.isFinite { rank = r }
            results.append(SavedActivity(persistentIdentifier: text("persistentIdentifier"), activityType: type, title: text("title"),
                                         webpageURL: url, targetContentIdentifier: text("targetContentIdentifier"), keywords: keywords,
                                         bundleID: text("bundleID"), device: "", savedAt: savedAt, expirationDate: expiration, rank: rank))
        }
        return results
    }
}
