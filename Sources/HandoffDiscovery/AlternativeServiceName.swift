/// Instance names to try when a name is taken: `"h1"`, `"h1 #2"`, `"h1 #3"`, ... (the scheme
/// Avahi and mDNSResponder use for their own renames).
///
/// Avahi renames on a conflict with another host by itself, but a name already registered
/// through the same avahi-daemon makes `DNSServiceRegister` fail with
/// `kDNSServiceErr_NameConflict` instead, so `ServiceAdvertiser` picks the next name itself.
public enum AlternativeServiceName {
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

    /// The names an instance called `name` had before its latest rename, when `name` has the
    /// form of one (`"h1 #N"`): the name before any rename (`"h1"`) and, from `#3` on, the one
    /// before it (`"h1 #(N-1)"`); empty for any other name. (A long name that was shortened to
    /// fit its suffix gives the shortened name, which no record was sealed for.)
    public static func namesBeforeRename(_ name: String) -> [String] {
        guard let hash = name.lastIndex(of: "#"), hash > name.startIndex else { return [] }
        let space = name.index(before: hash)
        let digits = name[name.index(after: hash)...]
        guard name[space] == " ", !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            digits.first != "0", let attempt = Int(digits), attempt >= 2
        else { return [] }
        let original = String(name[..<space])
        guard !original.isEmpty else { return [] }
        return attempt == 2 ? [original] : [original, "\(original) #\(attempt - 1)"]
    }
}
