/// Makes a file name chosen by a peer safe to create in an app's Inbox: no directory parts, no
/// `.` or `..`, no control characters, at most 200 bytes. Anything unusable becomes `file`.
public enum InboxFileName {
    /// The longest name kept, in UTF-8 bytes.
    public static let maximumLength = 200

    public static func sanitize(_ name: String) -> String {
        // Only the last path component, whatever the separator.
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var cleaned = String(String.UnicodeScalarView(last.unicodeScalars.filter {
            !$0.properties.generalCategory.isControlOrFormat && $0 != ":"
        }))
        cleaned = cleaned.trimmingSpaces()
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }  // no hidden files, no . or ..
        if cleaned.isEmpty { return "file" }
        if cleaned.utf8.count > maximumLength {
            var kept = ""
            for character in cleaned {
                guard kept.utf8.count + character.utf8.count <= maximumLength else { break }
                kept.append(character)
            }
            cleaned = kept
        }
        return cleaned
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
