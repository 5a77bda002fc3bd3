import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A keyed archive of property-list values for state preservation and restoration (UIKit's
/// NSCoder, as the state-restoration methods hand it): the app's own keys at the root, and one
/// nested coder per restorable object, by its restoration identifier.
///
/// ```swift
/// coder.encode("Groceries", forKey: "title")
/// coder.nestedCoder(forIdentifier: "editor").encode(42, forKey: "cursor")
/// let title = coder.decodeString(forKey: "title")          // "Groceries"
/// let cursor = coder.decodeInteger(forKey: "cursor")      // nil: another coder's key
/// ```
///
/// Decoding a key that is missing, or holds a value of another type, gives nil (as NSCoder's
/// `decodeObject(forKey:)` does); it never traps. Coders are shared references: a nested coder
/// writes into its parent's archive.
public final class RestorationCoder: Sendable {
    private struct Contents {
        var values: [String: PropertyListValue] = [:]
        var children: [String: RestorationCoder] = [:]
    }

    private let contents = Mutex(Contents())

    /// An empty coder, to encode into.
    public init() {}

    // MARK: Encoding

    /// Stores a property-list value under `key`, replacing what was there.
    public func encode(_ value: PropertyListValue, forKey key: String) {
        contents.withLock { $0.values[key] = value }
    }

    /// Stores a string.
    public func encode(_ value: String, forKey key: String) { encode(.string(value), forKey: key) }
    /// Stores an integer.
    public func encode(_ value: Int, forKey key: String) { encode(.integer(Int64(value)), forKey: key) }
    /// Stores a 64-bit integer.
    public func encode(_ value: Int64, forKey key: String) { encode(.integer(value), forKey: key) }
    /// Stores a floating-point number.
    public func encode(_ value: Double, forKey key: String) { encode(.double(value), forKey: key) }
    /// Stores a Boolean.
    public func encode(_ value: Bool, forKey key: String) { encode(.bool(value), forKey: key) }
    /// Stores bytes.
    public func encode(_ value: Data, forKey key: String) { encode(.data(value), forKey: key) }
    /// Stores a date.
    public func encode(_ value: Date, forKey key: String) { encode(.date(value), forKey: key) }
    /// Stores a URL.
    public func encode(_ value: URL, forKey key: String) { encode(.url(value), forKey: key) }
    /// Stores a UUID.
    public func encode(_ value: UUID, forKey key: String) { encode(.uuid(value), forKey: key) }
    /// Stores an array of property-list values.
    public func encode(_ value: [PropertyListValue], forKey key: String) { encode(.array(value), forKey: key) }
    /// Stores a dictionary of property-list values.
    public func encode(_ value: [String: PropertyListValue], forKey key: String) { encode(.dictionary(value), forKey: key) }

    /// Removes the value under `key`.
    public func removeValue(forKey key: String) {
        contents.withLock { _ = $0.values.removeValue(forKey: key) }
    }

    // MARK: Decoding

    /// Whether a value is stored under `key`.
    public func containsValue(forKey key: String) -> Bool {
        contents.withLock { $0.values[key] != nil }
    }

    /// The keys with a value, sorted.
    public var allKeys: [String] { contents.withLock { $0.values.keys.sorted() } }

    /// The value under `key`, of whatever type; nil when there is none.
    public func decodeValue(forKey key: String) -> PropertyListValue? {
        contents.withLock { $0.values[key] }
    }

    /// The string under `key`; nil when missing or not a string.
    public func decodeString(forKey key: String) -> String? {
        if case .string(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The integer under `key`; nil when missing, not an integer, or too large for `Int`.
    public func decodeInteger(forKey key: String) -> Int? {
        decodeInt64(forKey: key).flatMap { Int(exactly: $0) }
    }

    /// The 64-bit integer under `key`; nil when missing or not an integer.
    public func decodeInt64(forKey key: String) -> Int64? {
        if case .integer(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The number under `key` as a double (an integer converts, as NSCoder's `decodeDouble`
    /// does); nil when missing or not a number.
    public func decodeDouble(forKey key: String) -> Double? {
        switch decodeValue(forKey: key) {
        case .double(let v)?: v
        case .integer(let v)?: Double(v)
        default: nil
        }
    }

    /// The Boolean under `key`; nil when missing or not a Boolean.
    public func decodeBool(forKey key: String) -> Bool? {
        if case .bool(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The bytes under `key`; nil when missing or not data.
    public func decodeData(forKey key: String) -> Data? {
        if case .data(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The date under `key`; nil when missing or not a date.
    public func decodeDate(forKey key: String) -> Date? {
        if case .date(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The URL under `key`; nil when missing or not a URL.
    public func decodeURL(forKey key: String) -> URL? {
        if case .url(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The UUID under `key`; nil when missing or not a UUID.
    public func decodeUUID(forKey key: String) -> UUID? {
        if case .uuid(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The array under `key`; nil when missing or not an array.
    public func decodeArray(forKey key: String) -> [PropertyListValue]? {
        if case .array(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    /// The dictionary under `key`; nil when missing or not a dictionary.
    public func decodeDictionary(forKey key: String) -> [String: PropertyListValue]? {
        if case .dictionary(let v)? = decodeValue(forKey: key) { return v }
        return nil
    }

    // MARK: Nested coders

    /// The coder of the restorable object with this restoration identifier, below this one:
    /// made (empty) when there is none yet, so encoding can write into it.
    public func nestedCoder(forIdentifier identifier: String) -> RestorationCoder {
        contents.withLock { c in
            if let child = c.children[identifier] { return child }
            let child = RestorationCoder()
            c.children[identifier] = child
            return child
        }
    }

    /// The nested coder for `identifier` if the archive has one; nil otherwise (for decoding).
    public func existingNestedCoder(forIdentifier identifier: String) -> RestorationCoder? {
        contents.withLock { $0.children[identifier] }
    }

    /// The coder at a path of restoration identifiers below this one (``nestedCoder(forIdentifier:)``
    /// step by step); this coder for an empty path.
    public func nestedCoder(forIdentifierPath path: [String]) -> RestorationCoder {
        path.reduce(self) { $0.nestedCoder(forIdentifier: $1) }
    }

    /// The restoration identifiers of the nested coders directly below this one, sorted.
    public var nestedIdentifiers: [String] { contents.withLock { $0.children.keys.sorted() } }

    /// Every identifier path of a nested coder below this one, parents before children, siblings
    /// sorted.
    public var nestedIdentifierPaths: [[String]] {
        var paths: [[String]] = []
        for id in nestedIdentifiers {
            guard let child = existingNestedCoder(forIdentifier: id) else { continue }
            paths.append([id])
            paths += child.nestedIdentifierPaths.map { [id] + $0 }
        }
        return paths
    }

    // MARK: Property-list form

    /// The coder as one property-list dictionary: `values` and `children`, recursively.
    public var propertyList: PropertyListValue {
        let (values, children) = contents.withLock { ($0.values, $0.children) }
        return .dictionary(["values": .dictionary(values), "children": .dictionary(children.mapValues(\.propertyList))])
    }

    /// A coder from ``propertyList``; nil when the value does not have that shape.
    public convenience init?(propertyList: PropertyListValue, depth: Int = 0) {
        guard depth < PropertyListBinaryCoding.maximumDepth, case .dictionary(let body) = propertyList,
              case .dictionary(let values)? = body["values"], case .dictionary(let children)? = body["children"]
        else { return nil }
        var decodedChildren: [String: RestorationCoder] = [:]
        for (id, child) in children {
            guard let coder = RestorationCoder(propertyList: child, depth: depth + 1) else { return nil }
            decodedChildren[id] = coder
        }
        self.init()
        contents.withLock { $0 = Contents(values: values, children: decodedChildren) }
    }
}
