import HandoffCore
import HandoffTransport
import HandoffTrust
import Synchronization

/// A connection a paired device dialled to this one, whose hellos agreed to share it
/// (docs/PROTOCOL.md, "One connection per pair"), as this side's liveness sees it: a
/// ``FrameConnection`` whose writes go on the accepted connection and whose frames are the ones
/// ``PeerSession`` (which reads the connection) hands over because they answer this side's own
/// pings, subscription and fetches (``deliver(_:)``). ``PeerSession`` offers it to liveness
/// (``SharedLinks``), which adopts it or keeps it standing by (``SharedConnectionRule``).
final class SharedLink: FrameConnection {
    /// The device that dialled.
    let device: DeviceID
    /// Its hello, as the accepting session read it.
    let peerHello: PeerHello
    private let link: SourceLink
    private let inbox = FrameInbox()
    private let replies = Mutex<MultiplexedConnection?>(nil)
    private let repliesRead = Atomic<Int>(0)
    private let ended = Atomic<Bool>(false)
    /// Set when the peer says `goodbye` on it (it stops).
    let goodbye = PeerSaidGoodbye()
    /// Where the peer is reached, as its `announce` on this connection made it.
    private let announced = Mutex<PeerEndpoint?>(nil)

    init(device: DeviceID, peerHello: PeerHello, link: SourceLink) {
        self.device = device
        self.peerHello = peerHello
        self.link = link
    }

    func send(_ frames: [Frame]) async throws { try await link.write(frames) }

    func receive() async throws -> Frame? { try await inbox.next() }

    /// Closes the accepted connection itself: its session ends too.
    func close() async { await link.close() }

    /// A frame that answers this side's own requests on the connection. A `reply` goes straight
    /// to this side's fetches once they are on it (``takeReplies(into:)``), with no hop through
    /// liveness; the rest to liveness's reader.
    func deliver(_ frame: Frame) {
        if frame.kind == .reply, let fetches = replies.withLock({ $0 }) {
            repliesRead.add(1, ordering: .relaxed)
            guard fetches.received(frame) else { return inbox.finish(LivenessProbeError(reason: "a malformed reply frame")) }
            return
        }
        inbox.push(frame)
    }

    /// This side's fetches go on the connection: the `reply` frames are theirs from now on.
    func takeReplies(into fetches: MultiplexedConnection) { replies.withLock { $0 = fetches } }

    /// How many `reply` frames went straight to the fetches since the last call: each counts as
    /// heard from the peer (liveness asks at every tick).
    func takeRepliesRead() -> Int { repliesRead.exchange(0, ordering: .relaxed) }

    /// The session serving the connection ended: so does this side's use of it.
    func end() {
        ended.store(true, ordering: .releasing)
        inbox.finish()
    }

    /// Whether the connection has ended.
    var isEnded: Bool { ended.load(ordering: .acquiring) }

    /// The peer announced on it that it started; the agent reaches it at `endpoint` now
    /// (``Agent/receivedAnnouncement(port:instanceName:txtRecord:from:host:)``).
    func markAnnounced(at endpoint: PeerEndpoint) { announced.withLock { $0 = endpoint } }

    /// Where the peer is reached: where its `announce` on this connection put it (a restarted
    /// peer's port is new, and what DNS-SD or the last-known address says may be its old one),
    /// else `known`.
    func endpoint(orElse known: PeerEndpoint) -> PeerEndpoint { announced.withLock { $0 } ?? known }
}

/// The shared connections the peer sessions accepted and liveness has not taken yet.
final class SharedLinks: Sendable {
    private let offered = Mutex<[SharedLink]>([])

    /// A session accepted `link`; liveness takes it at its next step.
    func offer(_ link: SharedLink) {
        offered.withLock { links in
            links.removeAll(where: \.isEnded)
            links.append(link)
        }
    }

    /// The links offered since the last call, oldest first, those that ended already left out.
    func takeOffered() -> [SharedLink] {
        offered.withLock { links in
            defer { links.removeAll() }
            return links.filter { !$0.isEnded }
        }
    }
}

/// Whether the peer said `goodbye` on a shared connection (it stops): set by the side that reads
/// the frame, read by liveness when the connection ends (``PeerLiveness/saidGoodbye(_:attempt:now:)``).
final class PeerSaidGoodbye: Sendable {
    private let said = Atomic<Bool>(false)

    /// The peer said it.
    func mark() { said.store(true, ordering: .releasing) }

    /// Whether the peer said it.
    var isSaid: Bool { said.load(ordering: .acquiring) }
}
