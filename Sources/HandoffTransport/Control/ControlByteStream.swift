import HandoffCore
import HandoffTrust

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Bytes that travel on a connection as stream frames: `streamData` frames of at most
/// ``maxChunkBytes`` each, then `streamEnd`, with no base64 and no single large frame. On the
/// control socket they follow a request (`copy`: the client uploads) or an answer (`paste`: the
/// agent sends); between agents they follow a `clipboardItem`.
///
/// A sender that fails part way sends ``failure(_:)`` (a control response carrying the error) in
/// place of `streamEnd`, so the receiver learns why instead of seeing the bytes stop.
///
/// A value of this type is the receiving side: it counts the bytes against a limit and hashes
/// them (SHA-256) as they arrive.
public struct ControlByteStream: Sendable {
    /// The most bytes in one `streamData` frame, as on continuation streams.
    public static let maxChunkBytes = 64 * 1024

    /// The frame that ends the bytes.
    public static let end = Frame(kind: .streamEnd, payload: [])

    /// The frame that ends the bytes with a failure.
    public static func failure(_ error: HandoffError) -> Frame { ControlProtocol.response(.failure(error)) }

    /// The most bytes the receiver takes.
    public let limit: Int
    /// The error once more than ``limit`` bytes arrived.
    private let tooLarge: HandoffError
    /// The bytes received so far.
    public private(set) var count = 0
    /// Whether `streamEnd` arrived.
    public private(set) var isComplete = false
    private var digest = ContentDigest()

    /// A receiver of at most `limit` bytes; more fail with `tooLarge`.
    public init(limit: Int, tooLarge: HandoffError) {
        self.limit = limit
        self.tooLarge = tooLarge
    }

    /// Takes the next frame: returns its bytes, or nil when it ended the stream (`streamEnd`).
    /// Throws the error a sender sent in place of `streamEnd`, or when the limit is passed, or on
    /// a frame that has no place in a byte stream.
    public mutating func accept(_ frame: Frame) throws(HandoffError) -> [UInt8]? {
        guard !isComplete else { throw .handoffFailed("a \(frame.kind) frame after the end of the bytes") }
        switch frame.kind {
        case .streamData:
            guard frame.payload.count <= limit - count else { throw tooLarge }
            count += frame.payload.count
            digest.update(frame.payload)
            return frame.payload
        case .streamEnd:
            isComplete = true
            return nil
        case .controlResponse:
            if case .failure(let error) = try ControlProtocol.decodeResponse(frame) { throw error }
            throw .handoffFailed("the sender answered again in the middle of the bytes")
        case .error:
            // Between agents a failure is an error frame.
            guard case .error(let code, let message)? = try? PeerMessage(frame: frame) else { throw .handoffFailed("a malformed error frame") }
            throw HandoffError(HandoffError.Code(rawValue: code), message)
        default:
            throw .handoffFailed("a \(frame.kind) frame in the middle of the bytes")
        }
    }

    /// The SHA-256 of the bytes received so far, 64 hexadecimal digits.
    public var sha256: String { digest.hex() }

    /// Writes every byte to `fd` (a spool file, standard output), retrying after EINTR.
    public static func writeAll(_ bytes: [UInt8], to fd: Int32) throws(HandoffError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .handoffFailed("cannot write the bytes: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    // MARK: Sending

    /// Sends everything that can be read from `fd` until its end as `streamData` frames, then
    /// `streamEnd` (unless `endWith` is false), through `write`; at most `limit` bytes (more
    /// throw `tooLarge` without sending them). Returns the count and the SHA-256 of the bytes sent.
    @discardableResult
    public static func send(readingFrom fd: Int32, limit: Int = .max, tooLarge: HandoffError = .handoffFailed("too many bytes"),
                            endWith: Bool = true, through write: ([Frame]) async throws -> Void) async throws -> (count: Int, sha256: String) {
        var digest = ContentDigest()
        var count = 0
        var buffer = [UInt8](repeating: 0, count: maxChunkBytes)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, maxChunkBytes) }
            if n < 0 {
                if errno == EINTR { continue }
                throw HandoffError.handoffFailed("cannot read the bytes to send: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            guard n <= limit - count else { throw tooLarge }
            let chunk = Array(buffer[0..<n])
            count += n
            digest.update(chunk)
            try await write([Frame(kind: .streamData, payload: chunk)])
        }
        if endWith { try await write([end]) }
        return (count, digest.hex())
    }
}
