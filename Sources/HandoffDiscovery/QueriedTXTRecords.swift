/// The TXT records a `DNSServiceQueryRecord` reports for one service, and which of them is the
/// current one.
///
/// When a TXT record changes, the new record arrives with the cache-flush bit and the old one
/// stays in the daemon's cache for about a second before its removal is reported; a superseded
/// record received less than a second before its successor is not flushed at all and lingers
/// until its TTL expires (75 minutes). So several records can be present at once:
/// - A record added while the query is running is the newest: it becomes current at once.
/// - The records the daemon already had cached arrive together right after the query started.
///   Avahi delivers its cache newest first, so the first of them is taken as current (a guess);
///   if that guess is removed while others remain, the next one delivered takes its place.
/// - Otherwise removals never make an older record current: a goodbye removes the current record
///   while a superseded one may still be cached, and the service is about to go away anyway.
///
/// Anyone may send TXT records for any instance name, each distinct one lingering for its TTL,
/// so at most ``maximumPresent`` are remembered: past that the oldest that is not current is
/// forgotten (its removal, if it ever comes, is then ignored).
struct QueriedTXTRecords {
    /// Answers arriving this soon after the query started are the daemon's cached records.
    static let cachedAnswerWindow: Duration = .milliseconds(250)
    /// The most distinct records remembered at once (a change brings two, goodbyes a few more).
    static let maximumPresent = 8

    /// Present records in the order they were delivered, with how often each was added (Avahi
    /// may report a record once per IP protocol).
    private var present: [(record: [UInt8], count: Int)] = []
    private let startedAt: ContinuousClock.Instant
    /// The current record once any was reported; kept after its removal.
    private(set) var current: [UInt8]?
    /// Whether `current` came from the cached answers rather than a live update.
    private var currentIsGuess = false

    /// Starts tracking a query started at `startedAt`.
    init(startedAt: ContinuousClock.Instant) {
        self.startedAt = startedAt
    }

    /// Whether the query has reported any record.
    var hasAnswered: Bool {
        current != nil
    }

    mutating func add(_ record: [UInt8], at now: ContinuousClock.Instant) {
        if let index = present.firstIndex(where: { $0.record == record }) {
            present[index].count += 1
        } else {
            present.append((record, 1))
        }
        if now - startedAt > Self.cachedAnswerWindow {
            current = record
            currentIsGuess = false
        } else if current == nil {
            current = record
            currentIsGuess = true
        }
        if present.count > Self.maximumPresent, let oldest = present.firstIndex(where: { $0.record != current }) {
            present.remove(at: oldest)
        }
    }

    /// How many distinct records are remembered.
    var presentCount: Int { present.count }

    mutating func remove(_ record: [UInt8]) {
        guard let index = present.firstIndex(where: { $0.record == record }) else { return }
        if present[index].count > 1 {
            present[index].count -= 1
            return
        }
        present.remove(at: index)
        if currentIsGuess, record == current, let next = present.first {
            current = next.record
        }
    }
}
