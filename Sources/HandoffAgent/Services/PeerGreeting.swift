import HandoffCore

/// The opening of a pinned connection to a paired device that liveness and `handoff doctor`
/// share: hello and a first ping, then the peer's hello and first pong. The pong, not the hello,
/// proves the peer still pairs with this device: one that unpaired it answers hello but refuses
/// the ping.
enum PeerGreeting {
    /// How the peer answered.
    enum Answer: Sendable, Equatable {
        /// Hello and pong: it pairs with this device; its hello (whether it multiplexes).
        case paired(PeerHello)
        /// No hello back (TLS was accepted, the agent there did not greet).
        case noHello
        /// Hello, but no pong: it may have unpaired this device.
        case noPong
    }

    /// Sends hello and ping on `connection` and reads the two answers; throws when the
    /// connection fails.
    static func greet(_ connection: any FrameConnection, hello: PeerHello) async throws -> Answer {
        try await connection.send([PeerMessage.hello(hello).frame, PeerMessage.ping(sequence: 0).frame])
        guard let first = try await connection.receive(), case .hello(let theirs) = try PeerMessage(frame: first) else { return .noHello }
        guard let second = try await connection.receive(), second.kind == .pong else { return .noPong }
        return .paired(theirs)
    }
}
