import HandoffCore
import HandoffTransport
import Logging
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A clipboard item's bytes between two paired agents (docs/PROTOCOL.md, "Clipboard"): the
/// pasting agent connects, says hello and sends `clipboardFetch`; the source answers
/// `clipboardItem` (type, size, SHA-256), then the bytes as `streamData` frames and `streamEnd`,
/// or an `error` frame. The pasting agent passes the bytes on to its CLI as they arrive.
enum ClipboardTransfer {
    // MARK: Source

    /// Answers a paired device's `clipboardFetch` on its peer connection (PeerSession has
    /// checked the pairing): the item's description, then its bytes.
    static func serve(_ itemID: UUID, to outbound: NIOAsyncChannelOutboundWriter<Frame>, peer: String, agent: Agent, logger: Logger) async throws {
        let (item, fd): (ClipboardItemInfo, Int32)
        switch await agent.clipboardItemToServe(itemID) {
        case .success(let found): (item, fd) = found
        case .failure(let error):
            try await outbound.write(PeerMessage.error(code: error.code.rawValue, message: error.message).frame)
            return
        }
        defer { close(fd) }
        logger.info("serving the clipboard item", metadata: ["handoff.id": "\(itemID)", "handoff.peer": "\(peer)", "handoff.size": "\(item.size)"])
        try await outbound.write(PeerMessage.clipboardItem(item).frame)
        let changed = HandoffError.handoffFailed("the clipboard item's bytes changed on \(agent.configuration.name); copy again")
        try await ControlByteStream.send(readingFrom: fd, limit: item.size, tooLarge: changed) { try await outbound.write(contentsOf: $0) }
    }

    // MARK: Pasting

    /// `paste`: fetches the chosen item from its device and passes the answer on to the CLI on
    /// `cli`: a ``PasteHeader``, then the bytes as they arrive, then `streamEnd` once all of them
    /// came and their SHA-256 matched (else a failure in its place).
    static func paste(from: String?, requestID: JSONValue?, to cli: NIOAsyncChannelOutboundWriter<Frame>, agent: Agent) async throws {
        let itemID: UUID
        let peer: PeerRecord
        switch await agent.clipboardItemToPaste(from: from) {
        case .success(let chosen): (itemID, peer) = chosen
        case .failure(let error):
            try await cli.write(ControlProtocol.response(.failure(error), requestID: requestID))
            return
        }
        var answered = false
        do {
            try await fetch(itemID, from: peer, agent: agent, limit: agent.configuration.clipboard.maxBytes) { item in
                try await cli.write(ControlProtocol.response(.success(PasteHeader(item: item, peer: peer.name).json), requestID: requestID))
                answered = true
                return true
            } onBytes: { bytes in
                try await cli.write(Frame(kind: .streamData, payload: bytes))
            }
            try await cli.write(ControlByteStream.end)
        } catch {
            let failure = error as? HandoffError ?? .handoffFailed("the control connection failed: \(error)")
            try await cli.write(answered ? ControlByteStream.failure(failure) : ControlProtocol.response(.failure(failure), requestID: requestID))
        }
    }

    /// Fetches clipboard item `itemID` from `peer` on a new connection: `onHeader` gets its
    /// description (within `limit` bytes) and says whether to go on, `onBytes` each piece of its
    /// bytes as they arrive. Returns once every byte arrived and their SHA-256 matched the
    /// description's; throws what went wrong otherwise (4609 when the device went away).
    static func fetch(_ itemID: UUID, from peer: PeerRecord, agent: Agent, limit: Int,
                      onHeader: (ClipboardItemInfo) async throws -> Bool, onBytes: ([UInt8]) async throws -> Void) async throws(HandoffError) {
        let configuration = agent.configuration
        let connection: any PeerStreamConnection
        do {
            connection = try await agent.transport.connectStream(
                to: peer.endpoint, limits: ContinuationStreamSession.peerLimits,
                options: PeerStreamOptions(idleTimeout: configuration.limits.fetchTimeout))
        } catch {
            throw .connectionUnavailable("cannot reach \(peer.name), which offers the clipboard item: \(error)")
        }
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await outbound.write(contentsOf: [PeerMessage.hello(agent.hello).frame, PeerMessage.clipboardFetch(itemID: itemID).frame])
                var frames = inbound.makeAsyncIterator()
                let item = try await header(from: &frames, peer: peer.name, limit: limit, configurationName: configuration.name)
                guard try await onHeader(item) else { return }
                var stream = ControlByteStream(limit: item.size, tooLarge: .handoffFailed("\(peer.name) sent more than the \(item.size) bytes it announced"))
                while let frame = try await frames.next() {
                    guard let bytes = try stream.accept(frame) else { break }
                    try await onBytes(bytes)
                }
                guard stream.isComplete, stream.count == item.size else {
                    throw HandoffError.connectionUnavailable("\(peer.name) went away after \(stream.count) of \(item.size) bytes; nothing was pasted")
                }
                guard stream.sha256 == item.sha256 else {
                    throw HandoffError.handoffFailed("the bytes from \(peer.name) do not match the item's SHA-256; nothing was pasted")
                }
            }
        } catch {
            throw error as? HandoffError ?? .connectionUnavailable("the connection to \(peer.name) failed: \(error); nothing was pasted")
        }
    }

    /// Reads the source's answer to `clipboardFetch`: the item (within this host's
    /// `clipboard.maxBytes`), or the error it sent.
    private static func header(from frames: inout PeerFrameInbound.AsyncIterator, peer: String, limit: Int, configurationName: String) async throws
        -> ClipboardItemInfo
    {
        while let frame = try await frames.next() {
            switch try PeerMessage(frame: frame) {
            case .hello: continue
            case .clipboardItem(let item):
                guard item.size <= limit else {
                    throw HandoffError.userInfoTooLarge(
                        "the item on \(peer) is \(item.size) bytes, over clipboard.maxBytes (\(limit)) on \(configurationName); raise it there to paste it")
                }
                return item
            case .error(let code, let message):
                throw HandoffError(HandoffError.Code(rawValue: code), message)
            default:
                throw HandoffError.handoffFailed("\(peer) answered clipboardFetch with a \(frame.kind) frame")
            }
        }
        throw HandoffError.connectionUnavailable("\(peer) closed the connection before sending the clipboard item")
    }
}
