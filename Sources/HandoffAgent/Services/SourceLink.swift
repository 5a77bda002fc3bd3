import HandoffCore
import HandoffTransport
import HandoffTrust

/// What the source side of a peer connection writes to and knows of it: an accepted connection
/// (``PeerSession``), or a shared connection this side dialled, whose peer sends its own requests
/// on it (``SharedSourceRole``).
struct SourceLink: Sendable {
    /// Writes frames to the connection, in one flush.
    var write: @Sendable ([Frame]) async throws -> Void
    /// Closes the connection at once.
    var close: @Sendable () async -> Void
    /// Fault injection (`faults.dropAfterBytes`): lets this many more bytes out, then closes.
    var limitOutbound: @Sendable (Int) async -> Void
    /// The peer's address, for logs.
    var remote: String
    /// The host the peer is reached at (an announcement's address).
    var host: String?
    /// The paired device at the other end, as TLS proved it.
    var peerID: DeviceID?
    /// The certificate it presented, when the transport tells.
    var certificateDER: [UInt8]?
}

extension SourceLink {
    /// An accepted connection's.
    init(_ connection: FrameServer.Connection) {
        let outbound = connection.outbound
        write = { try await outbound.write(contentsOf: $0) }
        let closeNow = connection.close
        close = { closeNow() }
        limitOutbound = { await connection.limitOutbound(toBytes: $0) }
        remote = connection.remoteAddress.map { "\($0)" } ?? "unknown"
        host = connection.remoteAddress?.peerHost
        peerID = connection.peerIdentity?.deviceID
        certificateDER = connection.peerIdentity?.certificateDER
    }

    /// A connection this side dialled to `device` at `endpoint`.
    init(dialled connection: any FrameConnection, to device: DeviceID, at endpoint: PeerEndpoint) {
        write = { try await connection.send($0) }
        close = { await connection.close() }
        let limiting = connection as? any OutboundLimiting
        limitOutbound = { budget in
            if let limiting { await limiting.limitOutbound(toBytes: budget) } else { await connection.close() }
        }
        remote = "\(endpoint)"
        host = endpoint.host
        peerID = device
        certificateDER = (connection as? any UnpinnedFrameConnection)?.provenIdentity?.certificateDER
    }
}
