/// Checks of TXT rdata (a sequence of length-prefixed strings) before it is handed to dns_sd.
enum TXTRecordValidation {
    /// Whether `txt` is a sequence of length-prefixed strings that ends exactly at the end of
    /// the buffer and fits a DNS-SD TXT record (at most 65535 bytes). Empty is well-formed.
    static func isWellFormed(_ txt: [UInt8]) -> Bool {
        guard txt.count <= Int(UInt16.max) else { return false }
        var index = 0
        while index < txt.count {
            index += 1 + Int(txt[index])
        }
        return index == txt.count
    }

    /// The rdata to publish for `txt`: DNS-SD requires at least one string, so an empty record
    /// is published as one empty string.
    static func publishable(_ txt: [UInt8]) -> [UInt8] {
        txt.isEmpty ? [0] : txt
    }
}
