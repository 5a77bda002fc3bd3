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
/// - Two distinct records within that window leave the order in doubt: the second may be a cached
///   one delivered late, or a live update (a record changed right after its service appeared, as
///   when a service Avahi renamed is sealed again for its new name). The query is then made once
///   more when the window is over (``asksAgain``), and that one, with both records cached, takes the
///   first delivered: the newest.
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
    /// Whether this is the query made again (``asksAgain``): its first answer is taken as the newest.
    private let isAskedAgain: Bool
    /// Whether the query should be made again once ``cachedAnswerWindow`` is over, because two
    /// distinct records arrived within it; set once, and never for a query made again.
    private(set) var asksAgain = false

    /// Starts tracking a query started at `startedAt`; `askedAgain`: the query made again after
    /// one that ``asksAgain``.
    init(startedAt: ContinuousClock.Instant, askedAgain: Bool = false) {
        self.startedAt = startedAt
        self.isAskedAgain = askedAgain
    }

    /// Whether the query has reported any record.
    var hasAnswered: Bool {
        current != nil
    }

    mutating func add(_ record: [UInt8], at now: ContinuousClock.Instant) {
        let isNew: Bool
        if let index = present.firstIndex(where: { $0.record == record }) {
            present[index].count += 1
            isNew = false
        } else {
            present.append((record, 1))
            isNew = true
        }
        if now - startedAt > Self.cachedAnswerWindow {
            current = record
            currentIsGuess = false
        } else if current == nil {
            current = record
            currentIsGuess = true
        } else if isNew, currentIsGuess, !isAskedAgain {
            asksAgain = true
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
