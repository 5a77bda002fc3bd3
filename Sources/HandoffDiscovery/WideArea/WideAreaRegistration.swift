/// What an agent advertises in a wide-area DNS-SD domain: its TXT record and the instance name the
/// record is sealed for (the name mDNS registered the service under, which Avahi changes on a name
/// conflict, `"X"` → `"X #2"`, and a re-registration may change back).
public struct WideAreaAdvertisement: Sendable, Equatable {
    public var instanceName: String
    public var txtRecord: [UInt8]

    public init(instanceName: String, txtRecord: [UInt8]) {
        (self.instanceName, self.txtRecord) = (instanceName, txtRecord)
    }
}

/// Which of this agent's instance names a wide-area zone holds records under, and the dynamic
/// update that takes the zone to the advertisement now: the pure part of ``WideAreaRegistrar``,
/// which sends the updates and reports how the server answered.
///
/// The record is registered under the name it is sealed for. When that name changes, one update
/// removes the old name's PTR, SRV and TXT and adds the new name's: a server applies an RFC 2136
/// update whole or not at all, so the zone never holds a record under one name sealed for another,
/// and no old name is left behind. An update the server did not answer may or may not have been
/// applied, so the names it removed and added both stay "possibly in the zone": the next update
/// and the removal at shutdown remove them too.
public struct WideAreaRegistration: Sendable, Equatable {
    /// One dynamic update: register `advertisement`, and remove the PTR, SRV and TXT of every
    /// instance name in `removing` (never `advertisement.instanceName`) in the same message.
    public struct Update: Sendable, Equatable {
        public var advertisement: WideAreaAdvertisement
        public var removing: [String]
    }

    /// How the server answered an update.
    public enum Outcome: Sendable, Equatable {
        /// NOERROR: the update was applied.
        case accepted
        /// An error code (or the update was never sent): nothing of it was applied.
        case refused
        /// No answer: it may or may not have been applied.
        case unanswered
    }

    /// What the zone holds as the server last confirmed; nil before the first accepted update and
    /// after one that was refused or not answered (so the same advertisement is sent again).
    public private(set) var registered: WideAreaAdvertisement?
    /// The instance names the zone may hold this agent's records under.
    public private(set) var namesInZone: Set<String> = []

    public init() {}

    /// The advertisement to register is `wanted`: the update to send, or nil when the zone holds
    /// exactly that already.
    public func onAdvertisement(_ wanted: WideAreaAdvertisement) -> Update? {
        guard registered != wanted else { return nil }
        return Update(advertisement: wanted, removing: namesInZone.subtracting([wanted.instanceName]).sorted())
    }

    /// The server answered `update` (``Outcome``).
    public mutating func onAnswer(to update: Update, _ outcome: Outcome) {
        switch outcome {
        case .accepted:
            registered = update.advertisement
            namesInZone = [update.advertisement.instanceName]
        case .refused:
            registered = nil
        case .unanswered:
            registered = nil
            namesInZone.insert(update.advertisement.instanceName)
        }
    }

    /// The agent stops: the instance names whose records to remove (sorted), empty when the zone
    /// holds none of them.
    public func onShutdown() -> [String] { namesInZone.sorted() }
}
