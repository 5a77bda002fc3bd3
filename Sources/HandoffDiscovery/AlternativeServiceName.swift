/// Instance names to try when a name is taken: `"h1"`, `"h1 #2"`, `"h1 #3"`, ... (the scheme
/// Avahi and mDNSResponder use for their own renames).
///
/// Avahi renames on a conflict with another host by itself, but a name already registered
/// through the same avahi-daemon makes `DNSServiceRegister` fail with
/// `kDNSServiceErr_NameConflict` instead, so `ServiceAdvertiser` picks the next name itself.
enum AlternativeServiceName {
    /// The longest instance name DNS allows (one label), in UTF-8 bytes.
    static let maximumLength = 63

    /// The `attempt`-th name to try for `name`: `name` itself for attempt 1, then `"name #2"`,
    /// `"name #3"`, ..., with `name` shortened (at a character boundary) so the result fits
    /// `maximumLength`.
    static func candidate(_ name: String, attempt: Int) -> String {
        guard attempt > 1 else { return name }
        let suffix = " #\(attempt)"
        let budget = max(0, maximumLength - suffix.utf8.count)
        var base = ""
        var length = 0
        for character in name {
            let size = String(character).utf8.count
            guard length + size <= budget else { break }
            base.append(character)
            length += size
        }
        return base + suffix
    }
}
