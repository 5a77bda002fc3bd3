#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which offered activity `handoff continue` means: the newest on offer, the newest from one
/// device (`--from`), or the one whose ID starts with a prefix, as git takes a prefix of a
/// commit's ID. Pure: it chooses from what `list` answered.
public enum OfferSelection {
    /// The fewest characters a prefix may have.
    public static let minimumPrefixLength = 4
    /// The fewest characters a short ID has (``shortIDs(_:)``).
    public static let shortIDLength = 8

    /// Why no activity was chosen.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// Nothing on offer (from `peer`, when given).
        case nothingOffered(from: String?)
        /// No activity on offer (from `peer`) has an ID starting with the prefix.
        case noMatch(prefix: String, from: String?)
        /// More than one does: these, newest first.
        case ambiguous(prefix: String, candidates: [OfferedActivity])
        /// Not a prefix of an ID: too short, or not hexadecimal digits and dashes.
        case invalidPrefix(String)

        /// Whether the person asked wrongly (exit 64), rather than nothing matching now.
        public var isUsageError: Bool {
            switch self {
            case .ambiguous, .invalidPrefix: true
            case .nothingOffered, .noMatch: false
            }
        }

        public var description: String {
            switch self {
            case .nothingOffered(nil):
                "no activity is on offer from a reachable paired device; `handoff list` shows what is offered, `handoff peers` which devices are found"
            case .nothingOffered(let peer?):
                "\(peer) offers no activity now (or is not a reachable paired device); `handoff list` shows what is offered"
            case .noMatch(let prefix, let peer):
                "no activity on offer\(peer.map { " from \($0)" } ?? "") has an ID starting with \(prefix); `handoff list` shows the IDs"
            case .ambiguous(let prefix, let candidates):
                "\(prefix) is the start of \(candidates.count) activities' IDs; give more characters:\n"
                    + candidates.map { "  \($0.id.uuidString.lowercased())  \($0.peer)  \($0.title ?? $0.activityType)" }.joined(separator: "\n")
            case .invalidPrefix(let prefix):
                "\(prefix) is not the start of an activity ID: give at least \(OfferSelection.minimumPrefixLength) of its hexadecimal digits, as `handoff list` shows them"
            }
        }
    }

    /// Chooses an activity from `offered`: with `prefix`, the one whose ID starts with it (case
    /// and dashes as in a UUID); without, the newest; both among those `peer` offers when given.
    public static func select(prefix: String?, from peer: String?, in offered: [OfferedActivity]) -> Result<OfferedActivity, Problem> {
        let candidates = newestFirst(peer.map { name in offered.filter { $0.peer == name } } ?? offered)
        guard let prefix else {
            guard let newest = candidates.first else { return .failure(.nothingOffered(from: peer)) }
            return .success(newest)
        }
        let wanted = prefix.lowercased()
        guard wanted.count >= minimumPrefixLength, wanted.count <= 36, wanted.allSatisfy({ $0.isHexDigit || $0 == "-" }) else {
            return .failure(.invalidPrefix(prefix))
        }
        let matches = candidates.filter { $0.id.uuidString.lowercased().hasPrefix(wanted) }
        switch matches.count {
        case 0: return .failure(candidates.isEmpty && peer == nil ? .nothingOffered(from: nil) : .noMatch(prefix: prefix, from: peer))
        case 1: return .success(matches[0])
        default: return .failure(.ambiguous(prefix: prefix, candidates: matches))
        }
    }

    /// Newest first: by ``OfferedActivity/offeredAt``, then peer and ID, so the order is stable.
    public static func newestFirst(_ offered: [OfferedActivity]) -> [OfferedActivity] {
        offered.sorted {
            let (a, b) = ($0.offeredAt ?? .distantPast, $1.offeredAt ?? .distantPast)
            return a != b ? a > b : ($0.peer, $0.id.uuidString) < ($1.peer, $1.id.uuidString)
        }
    }

    /// Short IDs for a listing: the first ``shortIDLength`` lowercase characters of each ID, or
    /// more when two IDs share them, so each short ID is a unique prefix.
    public static func shortIDs(_ offered: [OfferedActivity]) -> [UUID: String] {
        let texts = offered.map { ($0.id, $0.id.uuidString.lowercased()) }
        var length = shortIDLength
        while length < 36, Set(texts.map { $0.1.prefix(length) }).count < Set(texts.map(\.0)).count { length += 1 }
        return Dictionary(texts.map { ($0.0, String($0.1.prefix(length))) }, uniquingKeysWith: { first, _ in first })
    }

    /// How long ago `date` was, as a listing shows it: "just now", "42s ago", "3m ago", "2h ago", "5d ago".
    public static func age(of date: Date?, now: Date) -> String {
        guard let date else { return "-" }
        let seconds = Int(now.timeIntervalSince(date))
        switch seconds {
        case ..<5: return "just now"
        case ..<60: return "\(seconds)s ago"
        case ..<3600: return "\(seconds / 60)m ago"
        case ..<86_400: return "\(seconds / 3600)h ago"
        default: return "\(seconds / 86_400)d ago"
        }
    }
}
