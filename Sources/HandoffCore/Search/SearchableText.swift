#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The text of an activity that the search index covers: its title, its keywords, the text of
/// its `contentAttributeSet` (Core Spotlight's attribute set: `contentDescription`,
/// `displayName`, `textContent` and any other string it holds) and its `webpageURL`.
public struct SearchableText: Sendable, Hashable {
    public var title: String
    public var keywords: String
    public var content: String
    public var webpageURL: String

    /// The longest text kept from a `contentAttributeSet`, in UTF-8 bytes; what follows is not
    /// indexed. An activity's fields are not bounded by the 3 KB of userInfo.
    public static let maximumContentBytes = 64 * 1024

    public init(_ activity: Activity) {
        title = activity.title ?? ""
        keywords = activity.keywords.sorted().joined(separator: " ")
        var pieces: [String] = []
        var budget = Self.maximumContentBytes
        if let attributes = activity.contentAttributeSet {
            // Sorted keys: the same attribute set always gives the same text.
            for key in attributes.keys.sorted() { Self.collect(attributes[key]!, into: &pieces, budget: &budget) }
        }
        content = pieces.joined(separator: "\n")
        webpageURL = activity.webpageURL?.absoluteString ?? ""
    }

    /// The strings inside a property-list value, depth first, until `budget` bytes are used.
    private static func collect(_ value: PropertyListValue, into pieces: inout [String], budget: inout Int) {
        guard budget > 0 else { return }
        switch value {
        case .string(let text):
            let kept = text.utf8.count <= budget ? text : String(decoding: text.utf8.prefix(budget), as: UTF8.self)
            budget -= kept.utf8.count
            pieces.append(kept)
        case .url(let url):
            collect(.string(url.absoluteString), into: &pieces, budget: &budget)
        case .array(let values):
            for element in values { collect(element, into: &pieces, budget: &budget) }
        case .dictionary(let members):
            for key in members.keys.sorted() { collect(members[key]!, into: &pieces, budget: &budget) }
        case .integer, .double, .bool, .data, .date, .uuid, .null:
            break
        }
    }
}
