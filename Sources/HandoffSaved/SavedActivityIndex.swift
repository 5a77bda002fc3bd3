import GRDB
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The activities one user saved for search (`isEligibleForSearch`), in SQLite with a full-text
/// index (FTS5) over the title, the keywords, the text of `contentAttributeSet` and `webpageURL`.
///
/// An activity is saved when it is published and replaced when published again: by its
/// `persistentIdentifier` within the app that saved it, or else by its ID. A saved activity
/// outlives its resign and the agent; it is gone at its `expirationDate`, when deleted
/// (``delete(persistentIdentifiers:by:)``, ``deleteAll(by:)``), or when more than
/// ``maximumCount`` are saved (the oldest go first).
public final class SavedActivityIndex: Sendable {
    /// Who deletes: an app deletes only what it saved; the person at the CLI deletes anything.
    public enum Deleter: Sendable, Hashable {
        case app(bundleID: String)
        case user
    }

    /// The most saved activities kept; saving one more removes the oldest.
    public let maximumCount: Int
    private let database: DatabaseQueue

    /// Opens (or creates) the index at `path`; nil makes one in memory, for tests.
    ///
    /// - Throws: when the file cannot be opened or is not this index (the error names the path).
    public init(path: String?, maximumCount: Int = 10_000) throws {
        self.maximumCount = maximumCount
        var configuration = Configuration()
        // WAL with synchronous=NORMAL: a save costs no fsync of its own, and a crash loses at
        // most the last saves, never the index.
        configuration.prepareDatabase { db in
            if !db.configuration.readonly, path != nil { try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL") }
        }
        database = try path.map { try DatabaseQueue(path: $0, configuration: configuration) } ?? DatabaseQueue()
        try Self.migrator.migrate(database)
    }

    /// Words are split by Unicode 6.1 rules, case and diacritics folded ("Café" finds "cafe").
    private static let tokenizer = FTS5TokenizerDescriptor.unicode61()

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "saved") { t in
                t.autoIncrementedPrimaryKey("rowid")
                // The app's bundle ID, or "" for an activity published without an app.
                t.column("owner", .text).notNull()
                t.column("activityID", .text).notNull()
                t.column("persistentIdentifier", .text)
                t.column("activityType", .text).notNull()
                t.column("title", .text).notNull()
                t.column("keywords", .text).notNull()
                t.column("content", .text).notNull()
                t.column("webpageURL", .text).notNull()
                t.column("targetContentIdentifier", .text)
                t.column("savedAt", .double).notNull()
                t.column("expiresAt", .double)
            }
            try db.create(index: "saved_by_persistent_id", on: "saved", columns: ["owner", "persistentIdentifier"])
            try db.create(index: "saved_by_activity_id", on: "saved", columns: ["owner", "activityID"])
            try db.create(virtualTable: "saved_text", using: FTS5()) { t in
                t.synchronize(withTable: "saved")
                t.tokenizer = tokenizer
                t.column("title")
                t.column("keywords")
                t.column("content")
                t.column("webpageURL")
            }
        }
        return migrator
    }

    /// Saves `activity` (replacing its earlier save), published by the app `bundleID` (nil: no app).
    public func save(_ activity: Activity, bundleID: String?, at now: Date) async throws {
        let text = SearchableText(activity)
        let owner = bundleID ?? ""
        let maximumCount = maximumCount
        try await database.write { db in
            // What expired goes first: expiry is honoured on disk too, not only in results.
            try db.execute(sql: "DELETE FROM saved WHERE expiresAt IS NOT NULL AND expiresAt <= ?", arguments: [now.timeIntervalSince1970])
            try db.execute(sql: "DELETE FROM saved WHERE owner = ? AND (activityID = ? OR (persistentIdentifier IS NOT NULL AND persistentIdentifier = ?))",
                           arguments: [owner, activity.id.uuidString, activity.persistentIdentifier])
            try db.execute(sql: """
                INSERT INTO saved (owner, activityID, persistentIdentifier, activityType, title, keywords, content, webpageURL,
                                   targetContentIdentifier, savedAt, expiresAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [owner, activity.id.uuidString, activity.persistentIdentifier, activity.activityType.rawValue, text.title,
                                 activity.keywords.sorted().joined(separator: "\n"), text.content, text.webpageURL,
                                 activity.targetContentIdentifier, now.timeIntervalSince1970, activity.expirationDate?.timeIntervalSince1970])
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM saved") ?? 0
            if count > maximumCount {
                try db.execute(sql: "DELETE FROM saved WHERE rowid IN (SELECT rowid FROM saved ORDER BY savedAt, rowid LIMIT ?)",
                               arguments: [count - maximumCount])
            }
        }
    }

    /// The saved activities that match every word of `query` (each as a prefix), best first;
    /// none that expired by `now`. `device` names this host in the results.
    ///
    /// - Throws: ``SearchQueryError`` when the query has no word to look for.
    public func search(_ query: String, device: String, limit: Int = 50, now: Date) async throws -> [SavedActivity] {
        try await database.read { db in
            // The query's words, as the index's own tokenizer splits them, each quoted: the
            // person's text is never FTS5 syntax (no operators, columns or parentheses).
            let words = try db.makeTokenizer(Self.tokenizer).tokenize(query: query).compactMap { $0.flags.contains(.colocated) ? nil : $0.token }
            guard !words.isEmpty else { throw SearchQueryError(query: query) }
            let pattern = words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"*" }.joined(separator: " ")
            // bm25's weights, per column: a word in the title counts most, then keywords, the
            // URL, and the body of the attribute set.
            return try Row.fetchAll(db, sql: """
                SELECT saved.*, bm25(saved_text, 10.0, 5.0, 1.0, 2.0) AS rank
                FROM saved JOIN saved_text ON saved_text.rowid = saved.rowid
                WHERE saved_text MATCH ? AND (saved.expiresAt IS NULL OR saved.expiresAt > ?)
                ORDER BY rank, saved.savedAt DESC LIMIT ?
                """, arguments: [pattern, now.timeIntervalSince1970, limit]).map { Self.savedActivity($0, device: device) }
        }
    }

    /// The newest saved activity with this persistent identifier that has not expired by `now`
    /// (for `handoff link --persistent-id`); `device` names this host.
    public func saved(persistentIdentifier: String, device: String, now: Date) async throws -> SavedActivity? {
        try await database.read { db in
            try Row.fetchOne(db, sql: """
                SELECT saved.*, 0.0 AS rank FROM saved
                WHERE persistentIdentifier = ? AND (expiresAt IS NULL OR expiresAt > ?) ORDER BY savedAt DESC LIMIT 1
                """, arguments: [persistentIdentifier, now.timeIntervalSince1970]).map { Self.savedActivity($0, device: device) }
        }
    }

    /// Deletes the saved activities with these persistent identifiers; returns how many.
    @discardableResult
    public func delete(persistentIdentifiers: [String], by deleter: Deleter) async throws -> Int {
        guard !persistentIdentifiers.isEmpty else { return 0 }
        let marks = Array(repeating: "?", count: persistentIdentifiers.count).joined(separator: ",")
        return try await database.write { db in
            switch deleter {
            case .app(let bundleID):
                try db.execute(sql: "DELETE FROM saved WHERE owner = ? AND persistentIdentifier IN (\(marks))",
                               arguments: StatementArguments([bundleID] + persistentIdentifiers))
            case .user:
                try db.execute(sql: "DELETE FROM saved WHERE persistentIdentifier IN (\(marks))", arguments: StatementArguments(persistentIdentifiers))
            }
            return db.changesCount
        }
    }

    /// Deletes every saved activity the deleter may delete; returns how many.
    @discardableResult
    public func deleteAll(by deleter: Deleter) async throws -> Int {
        try await database.write { db in
            switch deleter {
            case .app(let bundleID): try db.execute(sql: "DELETE FROM saved WHERE owner = ?", arguments: [bundleID])
            case .user: try db.execute(sql: "DELETE FROM saved")
            }
            return db.changesCount
        }
    }

    /// Deletes what expired by `now`; returns how many.
    @discardableResult
    public func deleteExpired(now: Date) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM saved WHERE expiresAt IS NOT NULL AND expiresAt <= ?", arguments: [now.timeIntervalSince1970])
            return db.changesCount
        }
    }

    /// How many activities are saved.
    public func count() async throws -> Int {
        try await database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM saved") ?? 0 }
    }

    private static func savedActivity(_ row: Row, device: String) -> SavedActivity {
        let owner: String = row["owner"]
        let keywords: String = row["keywords"]
        let title: String = row["title"]
        let url: String = row["webpageURL"]
        let expiresAt: Double? = row["expiresAt"]
        return SavedActivity(persistentIdentifier: row["persistentIdentifier"], activityType: row["activityType"],
                             title: title.isEmpty ? nil : title, webpageURL: url.isEmpty ? nil : URL(string: url),
                             targetContentIdentifier: row["targetContentIdentifier"],
                             keywords: keywords.split(separator: "\n").map(String.init), bundleID: owner.isEmpty ? nil : owner,
                             device: device, savedAt: Date(timeIntervalSince1970: row["savedAt"]),
                             expirationDate: expiresAt.map(Date.init(timeIntervalSince1970:)), rank: row["rank"])
    }
}

/// A search query with no word to look for.
public struct SearchQueryError: Error, Sendable, CustomStringConvertible {
    public var query: String
    public var description: String { "the query \"\(query)\" has no word to search for; give one or more words, like `handoff search budget 2026`" }
}
