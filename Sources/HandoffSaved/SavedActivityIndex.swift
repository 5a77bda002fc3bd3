import HandoffCore
import Synchronization

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
///
/// SQLite is reached through its C library (`SQLiteDatabase`), not GRDB: GRDB imports all of
/// Foundation, and so ICU, into every program that links this module (handoffd among them).
public final class SavedActivityIndex: Sendable {
    /// Who deletes: an app deletes only what it saved; the person at the CLI deletes anything.
    public enum Deleter: Sendable, Hashable {
        case app(bundleID: String)
        case user
    }

    /// The most saved activities kept; saving one more removes the oldest.
    public let maximumCount: Int
    /// One connection, used only under `lock`: one caller at a time.
    private let database: SQLiteDatabase
    private let lock = Mutex(())

    /// Opens (or creates) the index at `path`; nil makes one in memory, for tests.
    ///
    /// - Throws: when the file cannot be opened or is not this index (the error names the path).
    public init(path: String?, maximumCount: Int = 10_000) throws {
        self.maximumCount = maximumCount
        let database = try SQLiteDatabase(path: path)
        // WAL with synchronous=NORMAL: a save costs no fsync of its own, and a crash loses at
        // most the last saves, never the index.
        if path != nil { try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL") }
        try database.transaction { try $0.execute(Self.schema) }
        self.database = database
    }

    /// The table, its indexes, and the FTS5 index kept in step with it by triggers. Each is
    /// created only if missing, with the names and definitions GRDB gave them (the index files
    /// that GRDB made open as they are). Words are split by Unicode 6.1 rules, case and
    /// diacritics folded ("Café" finds "cafe").
    private static let schema = """
        CREATE TABLE IF NOT EXISTS "saved" (
            "rowid" INTEGER PRIMARY KEY AUTOINCREMENT,
            "owner" TEXT NOT NULL, -- the app's bundle ID, or "" for an activity published without an app
            "activityID" TEXT NOT NULL, "persistentIdentifier" TEXT, "activityType" TEXT NOT NULL,
            "title" TEXT NOT NULL, "keywords" TEXT NOT NULL, "content" TEXT NOT NULL, "webpageURL" TEXT NOT NULL,
            "targetContentIdentifier" TEXT, "savedAt" DOUBLE NOT NULL, "expiresAt" DOUBLE);
        CREATE INDEX IF NOT EXISTS "saved_by_persistent_id" ON "saved"("owner", "persistentIdentifier");
        CREATE INDEX IF NOT EXISTS "saved_by_activity_id" ON "saved"("owner", "activityID");
        CREATE VIRTUAL TABLE IF NOT EXISTS "saved_text" USING fts5(
            "title", "keywords", "content", "webpageURL", tokenize='unicode61', content='saved', content_rowid='rowid');
        CREATE TRIGGER IF NOT EXISTS "__saved_text_ai" AFTER INSERT ON "saved" BEGIN
            INSERT INTO "saved_text"("rowid", "title", "keywords", "content", "webpageURL")
            VALUES (new."rowid", new."title", new."keywords", new."content", new."webpageURL");
        END;
        CREATE TRIGGER IF NOT EXISTS "__saved_text_ad" AFTER DELETE ON "saved" BEGIN
            INSERT INTO "saved_text"("saved_text", "rowid", "title", "keywords", "content", "webpageURL")
            VALUES ('delete', old."rowid", old."title", old."keywords", old."content", old."webpageURL");
        END;
        CREATE TRIGGER IF NOT EXISTS "__saved_text_au" AFTER UPDATE ON "saved" BEGIN
            INSERT INTO "saved_text"("saved_text", "rowid", "title", "keywords", "content", "webpageURL")
            VALUES ('delete', old."rowid", old."title", old."keywords", old."content", old."webpageURL");
            INSERT INTO "saved_text"("rowid", "title", "keywords", "content", "webpageURL")
            VALUES (new."rowid", new."title", new."keywords", new."content", new."webpageURL");
        END;
        """

    /// Saves `activity` (replacing its earlier save), published by the app `bundleID` (nil: no app).
    public func save(_ activity: Activity, bundleID: String?, at now: Date) async throws {
        let text = SearchableText(activity)
        let owner = bundleID ?? ""
        let maximumCount = maximumCount
        try write { db in
            // What expired goes first: expiry is honoured on disk too, not only in results.
            try db.run("DELETE FROM saved WHERE expiresAt IS NOT NULL AND expiresAt <= ?", [.real(now.timeIntervalSince1970)])
            try db.run("DELETE FROM saved WHERE owner = ? AND (activityID = ? OR (persistentIdentifier IS NOT NULL AND persistentIdentifier = ?))",
                       [.text(owner), .text(activity.id.uuidString), .text(activity.persistentIdentifier)])
            try db.run("""
                INSERT INTO saved (owner, activityID, persistentIdentifier, activityType, title, keywords, content, webpageURL,
                                   targetContentIdentifier, savedAt, expiresAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(owner), .text(activity.id.uuidString), .text(activity.persistentIdentifier), .text(activity.activityType.rawValue),
                      .text(text.title), .text(activity.keywords.sorted().joined(separator: "\n")), .text(text.content), .text(text.webpageURL),
                      .text(activity.targetContentIdentifier), .real(now.timeIntervalSince1970), .real(activity.expirationDate?.timeIntervalSince1970)])
            let count = try Self.count(db)
            if count > maximumCount {
                try db.run("DELETE FROM saved WHERE rowid IN (SELECT rowid FROM saved ORDER BY savedAt, rowid LIMIT ?)", [.integer(count - maximumCount)])
            }
        }
    }

    /// The saved activities that match every word of `query` (each as a prefix), best first;
    /// none that expired by `now`. `device` names this host in the results.
    ///
    /// - Throws: ``SearchQueryError`` when the query has no word to look for.
    public func search(_ query: String, device: String, limit: Int = 50, now: Date) async throws -> [SavedActivity] {
        // The query's words, split as the index's own tokenizer splits them, each quoted: the
        // person's text is never FTS5 syntax (no operators, columns or parentheses).
        let words = searchWords(query)
        guard !words.isEmpty else { throw SearchQueryError(query: query) }
        let pattern = words.map { "\"" + $0.replacing("\"", with: "\"\"") + "\"*" }.joined(separator: " ")
        // bm25's weights, per column: a word in the title counts most, then keywords, the
        // URL, and the body of the attribute set.
        return try read { db in
            try db.rows("""
                SELECT saved.*, bm25(saved_text, 10.0, 5.0, 1.0, 2.0) AS rank
                FROM saved JOIN saved_text ON saved_text.rowid = saved.rowid
                WHERE saved_text MATCH ? AND (saved.expiresAt IS NULL OR saved.expiresAt > ?)
                ORDER BY rank, saved.savedAt DESC LIMIT ?
                """, [.text(pattern), .real(now.timeIntervalSince1970), .integer(limit)]).map { Self.savedActivity($0, device: device) }
        }
    }

    /// The newest saved activity with this persistent identifier that has not expired by `now`
    /// (for `handoff link --persistent-id`); `device` names this host.
    public func saved(persistentIdentifier: String, device: String, now: Date) async throws -> SavedActivity? {
        try read { db in
            try db.rows("""
                SELECT saved.*, 0.0 AS rank FROM saved
                WHERE persistentIdentifier = ? AND (expiresAt IS NULL OR expiresAt > ?) ORDER BY savedAt DESC LIMIT 1
                """, [.text(persistentIdentifier), .real(now.timeIntervalSince1970)]).first.map { Self.savedActivity($0, device: device) }
        }
    }

    /// Deletes the saved activities with these persistent identifiers; returns how many.
    @discardableResult
    public func delete(persistentIdentifiers: [String], by deleter: Deleter) async throws -> Int {
        guard !persistentIdentifiers.isEmpty else { return 0 }
        let marks = Array(repeating: "?", count: persistentIdentifiers.count).joined(separator: ",")
        let identifiers = persistentIdentifiers.map { SQLiteValue.text($0) }
        return try write { db in
            switch deleter {
            case .app(let bundleID):
                try db.run("DELETE FROM saved WHERE owner = ? AND persistentIdentifier IN (\(marks))", [.text(bundleID)] + identifiers)
            case .user:
                try db.run("DELETE FROM saved WHERE persistentIdentifier IN (\(marks))", identifiers)
            }
        }
    }

    /// Deletes every saved activity the deleter may delete; returns how many.
    @discardableResult
    public func deleteAll(by deleter: Deleter) async throws -> Int {
        try write { db in
            switch deleter {
            case .app(let bundleID): try db.run("DELETE FROM saved WHERE owner = ?", [.text(bundleID)])
            case .user: try db.run("DELETE FROM saved")
            }
        }
    }

    /// Deletes what expired by `now`; returns how many.
    @discardableResult
    public func deleteExpired(now: Date) async throws -> Int {
        try write { db in try db.run("DELETE FROM saved WHERE expiresAt IS NOT NULL AND expiresAt <= ?", [.real(now.timeIntervalSince1970)]) }
    }

    /// How many activities are saved.
    public func count() async throws -> Int {
        try read { db in try Self.count(db) }
    }

    /// Runs `body` in one transaction, alone on the connection.
    private func write<Result: Sendable>(_ body: (SQLiteDatabase) throws -> Result) throws -> Result {
        try lock.withLock { _ in try database.transaction(body) }
    }

    /// Runs `body` alone on the connection.
    private func read<Result: Sendable>(_ body: (SQLiteDatabase) throws -> Result) throws -> Result {
        try lock.withLock { _ in try body(database) }
    }

    private static func count(_ db: SQLiteDatabase) throws -> Int {
        try db.rows("SELECT COUNT(*) AS count FROM saved").first?["count"].intValue ?? 0
    }

    private static func savedActivity(_ row: SQLiteRow, device: String) -> SavedActivity {
        let owner = row["owner"].textValue ?? ""
        let title = row["title"].textValue ?? ""
        let url = row["webpageURL"].textValue ?? ""
        return SavedActivity(persistentIdentifier: row["persistentIdentifier"].textValue, activityType: row["activityType"].textValue ?? "",
                             title: title.isEmpty ? nil : title, webpageURL: url.isEmpty ? nil : URL(string: url),
                             targetContentIdentifier: row["targetContentIdentifier"].textValue,
                             keywords: (row["keywords"].textValue ?? "").split(separator: "\n").map(String.init), bundleID: owner.isEmpty ? nil : owner,
                             device: device, savedAt: Date(timeIntervalSince1970: row["savedAt"].doubleValue ?? 0),
                             expirationDate: row["expiresAt"].doubleValue.map(Date.init(timeIntervalSince1970:)), rank: row["rank"].doubleValue ?? 0)
    }
}

/// A search query with no word to look for.
public struct SearchQueryError: Error, Sendable, CustomStringConvertible {
    public var query: String
    public var description: String { "the query \"\(query)\" has no word to search for; give one or more words, like `handoff search budget 2026`" }
}
