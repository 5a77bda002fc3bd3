/// The framing of WebExtension native messaging (Chrome and Firefox): each message is a 32-bit
/// length in the host's native byte order (little-endian on every machine handoff runs on), then
/// that many bytes of UTF-8 JSON. `handoff browser-host` reads the extension's messages from its
/// standard input and writes its answers to its standard output in this framing.
public struct NativeMessageFraming: Sendable {
    /// The largest message accepted from the browser. The extension sends a URL and a title; a
    /// page whose URL alone is longer is not worth handing off, and a larger length is a broken stream.
    public static let maxMessageBytes = 64 * 1024

    /// Why the stream cannot be read on.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    private var buffer: [UInt8] = []

    public init() {}

    /// Adds bytes read from the stream; returns the whole messages they complete, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(Invalid) -> [JSONValue] {
        buffer.append(contentsOf: bytes)
        var messages: [JSONValue] = []
        while buffer.count >= 4 {
            let length = Int(buffer[0]) | Int(buffer[1]) << 8 | Int(buffer[2]) << 16 | Int(buffer[3]) << 24
            guard length <= Self.maxMessageBytes else {
                throw Invalid(description: "a native message of \(length) bytes, over the \(Self.maxMessageBytes)-byte limit: the stream is not native messaging")
            }
            guard buffer.count >= 4 + length else { break }
            let body = Array(buffer[4..<(4 + length)])
            buffer.removeFirst(4 + length)
            do { messages.append(try JSONValue(parsing: body)) } catch {
                throw Invalid(description: "a native message that is not JSON: \(error)")
            }
        }
        return messages
    }

    /// Whether bytes of an unfinished message are waiting (the stream ended mid-message).
    public var hasPartialMessage: Bool { !buffer.isEmpty }

    /// One message in the framing.
    public static func frame(_ message: JSONValue) -> [UInt8] {
        let body = Array(message.serialized.utf8)
        let n = UInt32(body.count)
        return [UInt8(truncatingIfNeeded: n), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 24)] + body
    }
}
