/// Which browsed instances `ServiceBrowser` follows ("active": resolved and queried, at most
/// ``Limits/capacity``, because each costs up to four dns_sd refs, with Avahi four system-bus
/// connections), and which wait for a turn.
///
/// Anyone on the LAN may publish instances of the service type, so a full table must not lock
/// out the instances that matter. The browser's user names those it could read (``pin(_:)``);
/// pinned instances keep their place. When the table is full, a newcomer takes the place of an
/// unpinned instance that has had its turn (``Limits/minimumTurn``): first one never resolved,
/// then one resolved but unreadable, the longest active first. The displaced instance waits at
/// the back of the queue; while instances wait, ``rotate(now:)`` gives them turns the same way.
/// So however many junk instances are published, an instance that can be read is followed
/// within a bounded time and then stays. An instance the user named before the browse reported it
/// (its peer pushed its record over a kept connection) does not wait for turns: it takes the place
/// of an unpinned instance at once, whether it appears or was waiting when pinned.
///
/// A pure value; the browser applies the returned ``Change``s. Generic over the clock's instant
/// so that tests need no waiting.
struct InstanceSlots<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The bounds.
    struct Limits: Sendable, Hashable {
        /// The most instances followed at once: the browser's table.
        var capacity = ServiceBrowser.maximumInstances
        /// The most instances waiting for a turn; past it the oldest waiting one is forgotten
        /// (until the browse reports it again).
        var waitingCapacity = 1024
        /// How long an unpinned instance is followed before another may take its place: enough
        /// to be resolved, queried and read by the browser's user.
        var minimumTurn: Duration = .seconds(5)
    }

    /// What the browser must do.
    enum Change: Sendable, Hashable {
        /// Start following the instance (resolve it).
        case activate(String)
        /// Stop following it (report it removed if it was reported); it waits for another turn.
        case park(String)
        /// Forget a waiting instance.
        case drop(String)
    }

    private struct Active: Sendable {
        var since: Instant
        var reported = false
    }

    let limits: Limits
    private var active: [String: Active] = [:]
    /// Waiting instances, first in line first.
    private(set) var waiting: [String] = []
    private(set) var pinned: Set<String> = []

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Whether the instance is followed now.
    func isActive(_ name: String) -> Bool { active[name] != nil }

    /// How many instances are followed now.
    var activeCount: Int { active.count }

    /// The browse reported an instance not known yet.
    mutating func appeared(_ name: String, now: Instant) -> [Change] {
        guard active[name] == nil, !waiting.contains(name) else { return [] }
        if active.count < limits.capacity {
            active[name] = Active(since: now)
            return [.activate(name)]
        }
        if let victim = evictable(now: now, ignoringTurns: pinned.contains(name)) {
            active[victim] = nil
            active[name] = Active(since: now)
            return [.park(victim), .activate(name)] + enqueue(victim)
        }
        return enqueue(name)
    }

    /// The instance is gone (active or waiting); a waiting one takes a freed place.
    mutating func disappeared(_ name: String, now: Instant) -> [Change] {
        if let index = waiting.firstIndex(of: name) {
            waiting.remove(at: index)
            return []
        }
        guard active.removeValue(forKey: name) != nil, !waiting.isEmpty else { return [] }
        let next = waiting.removeFirst()
        active[next] = Active(since: now)
        return [.activate(next)]
    }

    /// The browser reported the instance as resolved.
    mutating func reported(_ name: String) {
        active[name]?.reported = true
    }

    /// The instances the browser's user could read; replaces the previous set. Those waiting take
    /// the places of unpinned instances at once, turns or not.
    mutating func pin(_ names: Set<String>, now: Instant) -> [Change] {
        pinned = names
        var changes: [Change] = []
        for name in waiting where names.contains(name) {
            guard let victim = evictable(now: now, ignoringTurns: true) else { break }
            waiting.removeAll { $0 == name }
            active[victim] = nil
            active[name] = Active(since: now)
            changes += [.park(victim), .activate(name)] + enqueue(victim)
        }
        return changes
    }

    /// Gives instances that waited since before this call a turn, each in the place of an
    /// unpinned instance that has had its own. Call it every ``Limits/minimumTurn`` while
    /// instances wait.
    mutating func rotate(now: Instant) -> [Change] {
        var changes: [Change] = []
        for _ in 0..<waiting.count {
            guard let victim = evictable(now: now) else { break }
            let next = waiting.removeFirst()
            active[victim] = nil
            active[next] = Active(since: now)
            changes += [.park(victim), .activate(next)] + enqueue(victim)
        }
        return changes
    }

    /// The unpinned active instance that has had its turn (any, `ignoringTurns`) and should give
    /// its place first.
    private func evictable(now: Instant, ignoringTurns: Bool = false) -> String? {
        active.filter { name, slot in !pinned.contains(name) && (ignoringTurns || slot.since.duration(to: now) >= limits.minimumTurn) }
            .min { a, b in
                if a.value.reported != b.value.reported { return !a.value.reported }
                if a.value.since != b.value.since { return a.value.since < b.value.since }
                return a.key < b.key
            }?.key
    }

    private mutating func enqueue(_ name: String) -> [Change] {
        waiting.append(name)
        guard waiting.count > limits.waitingCapacity else { return [] }
        return [.drop(waiting.removeFirst())]
    }
}
