import HandoffCore
import HandoffTrust

/// A connection a peer dialled that this side's liveness adopted: its attempt in the machine.
struct SharedLinkAdoption: Sendable {
    var link: SharedLink
    var attempt: Int
    var endpoint: PeerEndpoint
    var knownByAddress: Bool
}

extension LivenessService {
    /// Takes the shared connections the peer sessions accepted since the last step and, by
    /// ``SharedConnectionRule``, adopts each as this side's connection to its peer or keeps it
    /// standing by. Returns the adoptions to watch and the connections they replace, to close.
    func adoptOffered() async -> [(SharedLinkAdoption, [any FrameConnection])] {
        standingBy = standingBy.filter { !$0.value.isEnded }
        var adoptions: [(SharedLinkAdoption, [any FrameConnection])] = []
        for link in agent.sharedLinks.takeOffered() {
            let current: SharedConnectionRule.Current
            switch machine.link(of: link.device) {
            case nil:
                // Not watched (yet): adopted when it is, instead of dialling.
                standingBy[link.device] = link
                continue
            case .idle?: current = .none
            case .connecting?: current = .dialled
            case .open(let attempt)?: current = connections[attempt]?.accepted == true ? .adopted : .dialled
            }
            guard SharedConnectionRule.adoptsAccepted(local: agent.deviceID.bytes, peer: link.device.bytes, current: current) else {
                logger.debug("liveness: a shared connection crossed this side's own, which wins; serving it only",
                             metadata: ["handoff.device": "\(link.device.shortID)"])
                standingBy[link.device] = link
                continue
            }
            if let adoption = await adopt(link) { adoptions.append(adoption) }
        }
        return adoptions
    }

    /// The connection standing by for `key`, adopted instead of the dial the machine asked for.
    func adoptStandingBy(_ key: DeviceID) async -> (SharedLinkAdoption, [any FrameConnection])? {
        guard let link = standingBy.removeValue(forKey: key), !link.isEnded else { return nil }
        return await adopt(link)
    }

    /// Makes `link` this side's connection to its peer (the machine closes the one it had).
    private func adopt(_ link: SharedLink) async -> (SharedLinkAdoption, [any FrameConnection])? {
        let key = link.device
        if standingBy[key] === link { standingBy.removeValue(forKey: key) }
        guard let target = targets[key], let (attempt, actions) = machine.adopt(key, now: clock.now) else {
            standingBy[key] = link
            return nil
        }
        logger.debug("liveness: using the connection the peer dialled", metadata: ["handoff.device": "\(key.shortID)"])
        let endpoint = target.endpoints.first ?? PeerEndpoint(host: "", port: 0, expectedIdentity: key.bytes)
        connections[attempt] = OpenConnection(key: key, connection: link, endpoint: endpoint)
        var closing: [any FrameConnection] = []
        for action in actions { if let connection = await perform(action) { closing.append(connection) } }
        return (SharedLinkAdoption(link: link, attempt: attempt, endpoint: endpoint, knownByAddress: target.subscribes), closing)
    }

    /// Watches an adopted connection until it ends, as a connection this side dialled is
    /// watched once greeted.
    func watch(_ adoption: SharedLinkAdoption) async {
        await serve(adoption.link, key: adoption.link.device, attempt: adoption.attempt, endpoint: adoption.endpoint,
                    knownByAddress: adoption.knownByAddress, theirs: adoption.link.peerHello, adopted: true, source: nil)
    }

    /// The replies read on adopted connections since the last tick, which went straight to the
    /// fetches (``SharedLink/deliver(_:)``), count as heard from their peers.
    func heardOnAdoptedLinks() {
        for (attempt, open) in connections {
            guard let link = open.connection as? SharedLink, link.takeRepliesRead() > 0 else { continue }
            machine.heard(open.key, attempt: attempt, now: clock.now)
        }
    }
}
