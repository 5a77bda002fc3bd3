/// The DNS-SD TXT rdata format shared by plain (``ActivityAdvertisement``) and sealed
/// advertisements: strings of at most 255 bytes, each prefixed by its length byte.
package enum TXTRecordEncoding {
    /// The rdata of `strings`, each cut to 255 bytes.
    package static func rdata(_ strings: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(strings.reduce(0) { $0 + 1 + min($1.count, 255) })
        for string in strings {
            out.append(UInt8(min(string.count, 255)))
            out.append(contentsOf: string.prefix(255))
        }
        return out
    }

    /// The longest prefix of whole characters within `limit` UTF-8 bytes.
    package static func truncate(_ text: String, toUTF8Bytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var size = 0
        for character in text {
            let n = character.utf8.count
            guard size + n <= limit else { break }
            result.append(character)
            size += n
        }
        return result
    }
}
