import HandoffCore
import HandoffTransport
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

/// A control connection that carries a clipboard item's bytes (``ControlByteStream``): `copy`,
/// whose bytes follow the request, or `paste`, whose bytes follow the answer. Each is the first
/// and only request on its connection.
enum ClipboardControlSession {
    /// Serves `copy` or `paste`, the first request on `connection`.
    static func serve<I: AsyncIteratorProtocol>(_ request: ControlRequest, requestID: JSONValue?, inbound: inout I,
                                                outbound: NIOAsyncChannelOutboundWriter<Frame>, agent: Agent) async throws
        where I.Element == Frame
    {
        switch request {
        case .copy(let mimeType, let size):
            let result = await receiveCopy(mimeType: mimeType, size: size, inbound: &inbound, agent: agent)
            try await outbound.write(ControlProtocol.response(result, requestID: requestID))
        case .paste(let from):
            try await ClipboardTransfer.paste(from: from, requestID: requestID, to: outbound, agent: agent)
        default:
            try await outbound.write(ControlProtocol.response(.failure(.handoffFailed("\(request.command) carries no bytes")), requestID: requestID))
        }
    }

    /// Spools the bytes that follow `copy`, then offers them as this device's clipboard item.
    /// An item over `clipboard.maxBytes` is refused (as soon as that is known: from `size`, or
    /// when the bytes pass it) and the item offered before stays.
    static func receiveCopy<I: AsyncIteratorProtocol>(mimeType: String, size: Int?, inbound: inout I, agent: Agent) async
        -> Result<JSONValue, HandoffError> where I.Element == Frame
    {
        let limit = agent.configuration.clipboard.maxBytes
        let tooLarge = HandoffError.userInfoTooLarge(
            "the item is larger than clipboard.maxBytes (\(limit) bytes) on \(agent.configuration.name); nothing was offered and the item offered before stays. Raise clipboard.maxBytes there, or send it as a file")
        if let size, size > limit { return .failure(tooLarge) }
        let id = UUID.random()
        let fd: Int32
        do { fd = try agent.clipboardSpool.create(id) } catch { return .failure(error) }
        var stream = ControlByteStream(limit: limit, tooLarge: tooLarge)
        do {
            while let frame = try await inbound.next() {
                guard let bytes = try stream.accept(frame) else { break }
                try ControlByteStream.writeAll(bytes, to: fd)
            }
        } catch {
            close(fd)
            agent.clipboardSpool.remove(id)
            return .failure(error as? HandoffError ?? .handoffFailed("the item's bytes did not arrive: \(error)"))
        }
        close(fd)
        guard stream.isComplete else {
            agent.clipboardSpool.remove(id)
            return .failure(.handoffFailed("the connection closed before the item's end; nothing was offered"))
        }
        let item = ClipboardItemInfo(mimeType: mimeType, size: stream.count, sha256: stream.sha256)
        return .success(await agent.offerClipboard(id: id, item: item).json)
    }
}
