#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension UUID {
    /// A new random UUID (version 4, RFC 9562), what `UUID()` makes, from the standard library's
    /// `SystemRandomNumberGenerator` (`getrandom(2)` on Linux, `arc4random_buf` on Darwin).
    /// FoundationEssentials' `UUID()` opens, reads and closes `/dev/urandom` for each UUID on
    /// Linux, three system calls and a file descriptor; a continue made several.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bits = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &bits) { bytes in
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // the RFC's variant
            return UUID(uuid: bytes.load(as: uuid_t.self))
        }
    }
}
