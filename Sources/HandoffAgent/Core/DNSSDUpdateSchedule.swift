import HandoffCore

/// When a new advertisement goes to DNS-SD (Avahi), as a pure value on the agent's timeline.
///
/// Paired devices connected to this one get each new advertisement pushed on their connection at
/// once (``AdvertisementFeed``); DNS-SD serves the paired devices that are not connected (and
/// devices looking for a pairing window). An update to Avahi wakes its daemon, the system bus, and
/// the daemon and agent of every device browsing the service: on a small machine that work
/// competes for the CPU with the push it follows (on the publishing host of a two-host lab, the
/// system bus and avahi-daemon spent 0.4–0.7 ms of CPU per change; docs/BENCHMARKS.md, "The
/// one-way message"). So:
/// - with no device subscribed to the push, the update goes out at once: DNS-SD is the only way;
/// - with one or more, it waits ``settle`` from the first change since the last update; changes
///   meanwhile ride along, and the newest record goes out when the wait ends (a throttle, never a
///   debounce: changes every few milliseconds still reach DNS-SD every ``settle``). Avahi itself
///   takes 55–240 ms to show a change and coalesces rapid ones (about one a second), so the wait
///   is within what a browsing device sees anyway.
struct DNSSDUpdateSchedule: Sendable, Equatable {
    /// What the agent does with a new record.
    enum Directive: Sendable, Equatable {
        /// Hand the newest record to DNS-SD now.
        case updateNow
        /// Wake at this instant and call ``settled(_:)``.
        case wake(at: AgentInstant)
        /// Nothing: a wait already running sends the newest record when it ends.
        case none
    }

    /// How long an update waits while devices are subscribed.
    let settle: Duration
    /// When the running wait ends; nil when none runs.
    private(set) var waitingUntil: AgentInstant?

    init(settle: Duration = .milliseconds(50)) {
        self.settle = settle
    }

    /// The advertisement changed at `now`, with `subscribers` devices subscribed to the push.
    mutating func changed(subscribers: Int, now: AgentInstant) -> Directive {
        // Nobody gets the push: DNS-SD at once, also while a wait runs (it then sends nothing new).
        guard subscribers > 0, settle > .zero else { return .updateNow }
        if waitingUntil != nil { return .none }
        let until = now.advanced(by: settle)
        waitingUntil = until
        return .wake(at: until)
    }

    /// The wait that ends at `instant` is over: whether to hand the newest record to DNS-SD.
    /// (A wake for another wait, which cannot happen while waits do not overlap, sends nothing.)
    mutating func settled(_ instant: AgentInstant) -> Bool {
        guard waitingUntil == instant else { return false }
        waitingUntil = nil
        return true
    }
}
