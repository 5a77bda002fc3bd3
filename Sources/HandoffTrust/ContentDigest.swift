import Crypto

/// The SHA-256 of bytes that arrive in pieces (a clipboard item, a sent file, a partial file's
/// name), in the lower-case hexadecimal form that `sha256sum` prints.
// SHA256 is a value (copy-on-write over its context) that swift-crypto does not mark Sendable.
public struct ContentDigest: @unchecked Sendable {
    private var hasher = SHA256()

    public init() {}

    /// Adds the next bytes.
    public mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        if let done = bytes.withContiguousStorageIfAvailable({ hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }) { return done }
        hasher.update(data: Array(bytes))
    }

    /// The digest of every byte added, as 64 hexadecimal digits.
    public func hex() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in hasher.finalize() {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The digest of `bytes`, as 64 hexadecimal digits.
    public static func hex<Bytes: Collection<UInt8>>(of bytes: Bytes) -> String {
        var digest = ContentDigest()
        digest.update(bytes)
        return digest.hex()
    }
}
