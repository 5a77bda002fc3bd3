import Crypto

/// A SHA-256 computed as bytes go by: a sent file's hash, on both sides of `handoff send`.
public struct FileDigest {
    private var hasher = SHA256()

    public init() {}

    /// Adds bytes.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bytes)
    }

    /// Adds bytes.
    public mutating func update(_ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// The hash of everything added, as 64 lowercase hex digits.
    public func hexDigest() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in hasher.finalize() {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The SHA-256 of `text`'s UTF-8, in hex (the name of a receiver's partial file).
    public static func hex(of text: String) -> String {
        var digest = FileDigest()
        digest.update(Array(text.utf8))
        return digest.hexDigest()
    }
}
