/// The kinds of frame in wire protocol v1 (docs/PROTOCOL.md).
public struct FrameKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Version handshake, first frame in each direction.
    public static let hello = FrameKind(rawValue: 0x01)
    /// Continuing agent asks for an activity.
    public static let fetch = FrameKind(rawValue: 0x02)
    /// Source sends the activity's fields, without userInfo.
    public static let activity = FrameKind(rawValue: 0x03)
    /// Source sends the encoded userInfo; its length is checked against `maxUserInfoBytes`.
    public static let userInfo = FrameKind(rawValue: 0x04)
    /// Either side reports a failure with an NSUserActivity error code.
    public static let error = FrameKind(rawValue: 0x05)
    /// Continuing agent tells the source its activity was continued (`userActivityWasContinued`).
    public static let continued = FrameKind(rawValue: 0x06)
    /// Continuing agent asks for continuation streams to an activity's app (first frame after hello).
    public static let streamOpen = FrameKind(rawValue: 0x07)
    /// Source agent: the app accepted; stream data follows in both directions.
    public static let streamAccepted = FrameKind(rawValue: 0x08)
    /// Bytes of a continuation stream (peer connections and stream control connections).
    public static let streamData = FrameKind(rawValue: 0x09)
    /// The sender will write no more stream data.
    public static let streamEnd = FrameKind(rawValue: 0x0A)
    /// Send a URL or a file to an app on the receiving host (a file follows as stream frames).
    public static let open = FrameKind(rawValue: 0x0B)
    /// The receiving app's answer to `open`.
    public static let opened = FrameKind(rawValue: 0x0C)
    /// Pairing, initiator: its name and its commitment to a nonce (docs/SECURITY.md).
    public static let pairRequest = FrameKind(rawValue: 0x30)
    /// Pairing, responder: its name and its nonce.
    public static let pairNonce = FrameKind(rawValue: 0x31)
    /// Pairing, initiator: the nonce it committed to.
    public static let pairReveal = FrameKind(rawValue: 0x32)
    /// Pairing, both sides: whether the user confirmed the code, and if so the advertising key.
    public static let pairConfirm = FrameKind(rawValue: 0x33)
    /// Paired agents exchange their current advertising keys.
    public static let keys = FrameKind(rawValue: 0x34)
    /// Liveness: a paired agent asks whether the other is still there (after hello).
    public static let ping = FrameKind(rawValue: 0x35)
    /// Liveness: the answer to `ping`.
    public static let pong = FrameKind(rawValue: 0x36)
    /// A paired agent asks, on its liveness connection, to be sent the other's advertisement
    /// now and on every change (a device known by address, not over DNS-SD).
    public static let subscribe = FrameKind(rawValue: 0x37)
    /// The sender's sealed advertisement: its instance name and TXT record, as DNS-SD carries them.
    public static let advertisement = FrameKind(rawValue: 0x38)
    /// A paired agent that started tells the other it is back, on its first liveness connection:
    /// the port it listens on and its sealed advertisement (docs/PROTOCOL.md, "Rejoining").
    public static let announce = FrameKind(rawValue: 0x39)
    /// A paired agent that stops tells the other, on its liveness connection, before it closes it.
    public static let goodbye = FrameKind(rawValue: 0x3A)
    /// Continuing agent, on a multiplexed connection: a request ID and a request frame (`fetch`);
    /// many may be in flight (``TaggedFrame``, docs/PROTOCOL.md "Multiplexed requests").
    public static let request = FrameKind(rawValue: 0x3B)
    /// Source agent, on a multiplexed connection: a request ID and one frame of that request's
    /// answer (`activity`, `userInfo` or `error`), in any order between requests.
    public static let reply = FrameKind(rawValue: 0x3C)
    /// A paired agent asks for the saved activities that match a query (`handoff search --devices all`).
    public static let searchRequest = FrameKind(rawValue: 0x50)
    /// The answer to `searchRequest`: saved activities, best first.
    public static let searchResults = FrameKind(rawValue: 0x51)
    /// A paired agent asks for the contents of a clipboard item (`handoff paste`).
    public static let clipboardFetch = FrameKind(rawValue: 0x40)
    /// The source's answer to `clipboardFetch`: the item's type, size and SHA-256; its bytes
    /// follow as `streamData` frames, then `streamEnd`.
    public static let clipboardItem = FrameKind(rawValue: 0x41)
    /// File send, sender: the files that follow (first frame after hello; docs/PROTOCOL.md).
    public static let fileOffer = FrameKind(rawValue: 0x48)
    /// File send, receiver: takes the offer, with the byte each file starts from.
    public static let fileAnswer = FrameKind(rawValue: 0x49)
    /// File send, sender: one file's bytes are over; its SHA-256.
    public static let fileEnd = FrameKind(rawValue: 0x4A)
    /// File send, receiver: where one file landed, or why it was not kept.
    public static let fileReceived = FrameKind(rawValue: 0x4B)
    /// Local control socket: a JSON request.
    public static let controlRequest = FrameKind(rawValue: 0x20)
    /// Local control socket: a JSON response.
    public static let controlResponse = FrameKind(rawValue: 0x21)

    /// Every kind a v1 decoder accepts.
    public static let known: Set<FrameKind> = [
        .hello, .fetch, .activity, .userInfo, .error, .continued, .streamOpen, .streamAccepted, .streamData, .streamEnd,
        .open, .opened, .pairRequest, .pairNonce, .pairReveal, .pairConfirm, .keys, .ping, .pong, .subscribe, .advertisement, .announce, .goodbye, .request, .reply, .searchRequest, .searchResults, .controlRequest, .controlResponse,
        .clipboardFetch, .clipboardItem, .fileOffer, .fileAnswer, .fileEnd, .fileReceived,
    ]

    /// What a peer that is not paired may send: the handshake and the pairing exchange.
    public static let beforePairing: Set<FrameKind> = [.hello, .pairRequest, .pairReveal, .pairConfirm]

    public var description: String {
        switch self {
        case .hello: "hello"
        case .fetch: "fetch"
        case .activity: "activity"
        case .userInfo: "userInfo"
        case .error: "error"
        case .continued: "continued"
        case .streamOpen: "streamOpen"
        case .streamAccepted: "streamAccepted"
        case .streamData: "streamData"
        case .streamEnd: "streamEnd"
        case .open: "open"
        case .opened: "opened"
        case .pairRequest: "pairRequest"
        case .pairNonce: "pairNonce"
        case .pairReveal: "pairReveal"
        case .pairConfirm: "pairConfirm"
        case .keys: "keys"
        case .ping: "ping"
        case .pong: "pong"
        case .subscribe: "subscribe"
        case .advertisement: "advertisement"
        case .announce: "announce"
        case .goodbye: "goodbye"
        case .request: "request"
        case .reply: "reply"
        case .searchRequest: "searchRequest"
        case .searchResults: "searchResults"
        case .clipboardFetch: "clipboardFetch"
        case .clipboardItem: "clipboardItem"
        case .fileOffer: "fileOffer"
        case .fileAnswer: "fileAnswer"
        case .fileEnd: "fileEnd"
        case .fileReceived: "fileReceived"
        case .controlRequest: "controlRequest"
        case .controlResponse: "controlResponse"
        default: "unknown(0x\(String(rawValue, radix: 16)))"
        }
    }
}

/// One frame: a kind and a payload. On the wire a 5-byte header (kind, then the payload length
/// as a big-endian UInt32) precedes the payload.
public struct Frame: Sendable, Hashable {
    /// The size of the header.
    public static let headerSize = 5

    public var kind: FrameKind
    public var payload: [UInt8]

    public init(kind: FrameKind, payload: [UInt8]) {
        self.kind = kind
        self.payload = payload
    }

    /// The header and payload as bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerSize + payload.count)
        out.append(contentsOf: FrameHeader(kind: kind, length: payload.count).bytes)
        out.append(contentsOf: payload)
        return out
    }
}

/// A frame's header: its kind and declared payload length.
public struct FrameHeader: Sendable, Hashable {
    public var kind: FrameKind
    public var length: Int

    public init(kind: FrameKind, length: Int) {
        self.kind = kind
        self.length = length
    }

    /// Reads a header from the first ``Frame/headerSize`` bytes.
    ///
    /// Inlinable, so that it is specialized for the caller's collection: unspecialized, each index
    /// step allocates, and decoders call it on every read.
    @inlinable
    public init<C: Collection<UInt8>>(bytes: C) {
        precondition(bytes.count >= Frame.headerSize)
        var i = bytes.startIndex
        kind = FrameKind(rawValue: bytes[i])
        var length = 0
        for _ in 0..<4 {
            i = bytes.index(after: i)
            length = length << 8 | Int(bytes[i])
        }
        self.length = length
    }

    /// The five header bytes.
    public var bytes: [UInt8] {
        let l = UInt32(length)
        return [kind.rawValue, UInt8(l >> 24), UInt8(truncatingIfNeeded: l >> 16), UInt8(truncatingIfNeeded: l >> 8), UInt8(truncatingIfNeeded: l)]
    }
}

/// Size limits a decoder checks against a header before it reads any payload.
public struct FrameLimits: Sendable, Hashable {
    /// The largest payload of any frame other than userInfo.
    public var maxFrameBytes: Int
    /// The largest userInfo payload (`limits.maxUserInfoBytes`).
    public var maxUserInfoBytes: Int

    public init(maxFrameBytes: Int = 64 * 1024, maxUserInfoBytes: Int = 3072) {
        self.maxFrameBytes = maxFrameBytes
        self.maxUserInfoBytes = maxUserInfoBytes
    }

    /// Checks a header: a known kind and a length within the limit for that kind.
    public func check(_ header: FrameHeader) throws(FrameError) {
        guard FrameKind.known.contains(header.kind) else { throw .unknownKind(header.kind.rawValue) }
        if header.kind == .userInfo {
            guard header.length <= maxUserInfoBytes else {
                throw .userInfoTooLarge(declared: header.length, limit: maxUserInfoBytes)
            }
        } else {
            guard header.length <= maxFrameBytes else {
                throw .frameTooLarge(kind: header.kind, declared: header.length, limit: maxFrameBytes)
            }
        }
    }
}

/// Why a frame was refused. Any of these closes the connection it arrived on, and only that one.
public enum FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownKind(UInt8)
    case frameTooLarge(kind: FrameKind, declared: Int, limit: Int)
    case userInfoTooLarge(declared: Int, limit: Int)
    case malformed(kind: FrameKind, reason: String)
    case unexpected(kind: FrameKind, expecting: String)

    public var description: String {
        switch self {
        case .unknownKind(let k): "unknown frame kind 0x\(String(k, radix: 16)); the peer is not a handoff agent or speaks another protocol"
        case .frameTooLarge(let kind, let declared, let limit): "\(kind) frame of \(declared) bytes exceeds the \(limit)-byte limit"
        case .userInfoTooLarge(let declared, let limit): "userInfo of \(declared) bytes exceeds limits.maxUserInfoBytes (\(limit))"
        case .malformed(let kind, let reason): "malformed \(kind) frame: \(reason)"
        case .unexpected(let kind, let expecting): "unexpected \(kind) frame, expecting \(expecting)"
        }
    }
}
