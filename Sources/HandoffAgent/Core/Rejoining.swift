import HandoffCore
import HandoffTrust

/// How an agent that starts gets back in touch with its paired devices at once, before DNS-SD
/// has shown anything (issue 21, "discovery at the speed of the link"). Pure state.
///
/// - At start, every paired device with addresses it was last found at
///   (``PairedDevice/lastKnownAddresses``) is reached there by liveness, which subscribes to its
///   advertisement (as for a device known by address) until DNS-SD shows it. A device that is not
///   there is tried again (every half `liveness.interval`) for ``window`` after the start, not
///   for ever: paired devices often start together (a power cut, a network that came back), and
///   one that starts a moment after this one, or is too busy to answer at first, is found there
///   rather than after DNS-SD's probing. One that answered and then stops is listed unreachable
///   and tried again, as a device known by address is, until DNS-SD shows it.
/// - The first liveness connection to each device after start carries `announce`: this agent's
///   port and sealed advertisement. So does every connection that subscribes: the other side may
///   not see this one over DNS-SD either.
/// - A device that announces itself here is reached at the address it announced from, the same
///   way, until DNS-SD shows it.
struct Rejoining: Sendable {
    /// How long after the start a device never heard from is still tried at its last known
    /// addresses.
    static let window: Duration = .seconds(10)
    /// The devices liveness reaches at their last known addresses.
    private(set) var pending: Set<DeviceID>
    /// The devices told since start that this agent is back.
    private(set) var told: Set<DeviceID> = []
    /// When ``window`` ends; nil once it has.
    private var windowEnds: AgentInstant?

    /// At start (`now`): the paired devices that have last known addresses.
    init(devices: [PairedDevice], now: AgentInstant) {
        pending = Set(devices.filter { !$0.lastKnownAddresses.isEmpty }.map(\.deviceID))
        windowEnds = now.advanced(by: Self.window)
    }

    /// Whether liveness should reach `device` at its last known addresses (when neither DNS-SD
    /// nor a stored address shows it).
    func reachesAtLastKnownAddresses(_ device: DeviceID) -> Bool { pending.contains(device) }

    /// DNS-SD shows the device: from now on it is the way to it.
    mutating func shownByDNSSD(_ device: DeviceID) { pending.remove(device) }

    /// Liveness found a device it never heard from unreachable: no more attempts at its last
    /// known addresses.
    mutating func unreachable(_ device: DeviceID) { pending.remove(device) }

    /// Liveness found `device` unreachable; `listed`: whether the directory lists it (DNS-SD,
    /// an announce or a stored address showed it). Returns whether to show it unreachable.
    ///
    /// A device not listed was never heard from since start (its last known addresses refused,
    /// or nothing answered there): it is not tried there again, and not marked unreachable. A
    /// refused stale address says nothing of the device (it listens on another port now), and
    /// DNS-SD may show it a moment later: it is then listed reachable until liveness finds
    /// otherwise, like any peer found, rather than unreachable until a probe answers (with
    /// 24 agents starting together, one flip and one flip back per peer).
    ///
    /// Within ``window`` of the start it is still tried there (the peer may be starting too).
    mutating func foundUnreachable(_ device: DeviceID, listed: Bool, now: AgentInstant) -> Bool {
        if !listed, windowEnds.map({ now >= $0 }) ?? true { unreachable(device) }
        return listed
    }

    /// At each look at the devices to reach: once ``window`` has passed, those never heard from
    /// since the start (`listed` false: neither DNS-SD, an announce nor a push showed them) are
    /// no longer tried at their last known addresses.
    mutating func windowPassed(now: AgentInstant, listed: (DeviceID) -> Bool) {
        guard let end = windowEnds, now >= end else { return }
        windowEnds = nil
        pending = pending.filter(listed)
    }

    /// The device announced that it is back (its address is now its last known one).
    mutating func announced(by device: DeviceID) { pending.insert(device) }

    /// Whether a liveness connection just opened to `device` should carry `announce`: the first
    /// one since start, and every one that subscribes. Counts it as told.
    mutating func shouldAnnounce(to device: DeviceID, subscribing: Bool) -> Bool {
        told.insert(device).inserted || subscribing
    }
}
