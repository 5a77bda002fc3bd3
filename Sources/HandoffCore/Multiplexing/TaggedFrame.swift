/// One frame of one request on a multiplexed connection (docs/PROTOCOL.md, "Multiplexed
/// requests"): the request's ID and the frame, carried as the payload of a `request` frame
/// (continuing agent to source: a `fetch`) or a `reply` frame (source to continuing agent: the
/// `activity`, `userInfo` or `error` of that fetch).
///
/// The payload is the ID as a big-endian UInt32, then the inner frame whole, its 5-byte header
/// included: `[kind][length u32][id u32][inner kind][inner length u32][inner payload]`. Many
/// requests share the connection; their replies come as they are ready, in any order.
public struct TaggedFrame: Sendable, Hashable {
    /// The bytes a tag adds to the frame it carries: the ID and the inner header.
    public static let overhead = 4 + Frame.headerSize

    /// The request this frame belongs to; chosen by the continuing agent, unique among the
    /// requests in flight on the connection.
    public var id: UInt32
    /// The frame of that request.
    public var frame: Frame

    public init(id: UInt32, frame: Frame) {
        self.id = id
        self.frame = frame
    }

    /// The tagged frame as a frame of `kind` (`.request` or `.reply`).
    public func wrapped(as kind: FrameKind) -> Frame {
        var payload: [UInt8] = []
        payload.reserveCapacity(Self.overhead + frame.payload.count)
        payload.append(contentsOf: [UInt8(id >> 24), UInt8(truncatingIfNeeded: id >> 16), UInt8(truncatingIfNeeded: id >> 8), UInt8(truncatingIfNeeded: id)])
        payload.append(contentsOf: FrameHeader(kind: frame.kind, length: frame.payload.count).bytes)
        payload.append(contentsOf: frame.payload)
        return Frame(kind: kind, payload: payload)
    }

    /// Unwraps a `request` or `reply` frame. The inner frame's limits are the receiver's to
    /// check (``innerHeader``); this checks only that the tag is whole.
    public init(unwrapping outer: Frame) throws(FrameError) {
        let bytes = outer.payload
        guard bytes.count >= Self.overhead else { throw .malformed(kind: outer.kind, reason: "shorter than a request ID and a frame header") }
        let id = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let header = FrameHeader(bytes: bytes[4..<Self.overhead])
        guard header.length == bytes.count - Self.overhead else {
            throw .malformed(kind: outer.kind, reason: "the inner frame declares \(header.length) bytes, \(bytes.count - Self.overhead) follow")
        }
        self.init(id: id, frame: Frame(kind: header.kind, payload: Array(bytes[Self.overhead...])))
    }

    /// The inner frame's header, to check against the receiver's limits.
    public var innerHeader: FrameHeader { FrameHeader(kind: frame.kind, length: frame.payload.count) }
}
