/// Which connection a pair of devices that share one keeps (docs/PROTOCOL.md, "One connection
/// per pair"): a pure rule both sides apply alike, so that crossing dials settle on one.
///
/// Each side dials the other when it has no connection to it, as liveness always did. When a
/// connection the peer dialled arrives, and the hellos agree to share it, the side that accepted
/// it either adopts it as its own connection to the peer (its pings, subscription and fetches go
/// on it) or only serves it, standing by. The rule:
/// - With no connection of its own to the peer (none open, none opening), it adopts it.
/// - When it had adopted another connection of the peer's, the peer dialled anew (it found the
///   old one gone): it adopts the new one.
/// - When its own dial is open or opening, the two crossed: the connection dialled by the device
///   with the lower device ID wins on both sides. The side with the higher ID adopts the peer's
///   and closes its own; the side with the lower ID keeps its own and stands by, until the peer
///   closes the other.
/// - A side about to dial adopts a connection standing by instead (its own dial failed: the
///   peer can reach it, it cannot reach the peer).
public enum SharedConnectionRule {
    /// This side's own connection to the peer when a connection of the peer's arrives.
    public enum Current: Sendable, Hashable {
        /// None open, none opening.
        case none
        /// Its own dial, opening or open.
        case dialled
        /// A connection of the peer's, adopted earlier.
        case adopted
    }

    /// Whether the side with device ID `local` adopts the connection the peer `peer` dialled.
    public static func adoptsAccepted(local: [UInt8], peer: [UInt8], current: Current) -> Bool {
        switch current {
        case .none, .adopted: true
        case .dialled: dialWins(of: peer, over: local)
        }
    }

    /// Whether the dial of device `dialler` wins over that of `other` when they cross: the lower
    /// device ID's, bytewise.
    public static func dialWins(of dialler: [UInt8], over other: [UInt8]) -> Bool {
        dialler.lexicographicallyPrecedes(other)
    }
}
