/// Text that came from another device (an agent name, a title, an error message), made safe to
/// print on a terminal or write to a log line.
///
/// A peer chooses these strings. Printed raw, they could move the cursor, clear the screen and
/// draw a fake pairing prompt (ESC and CSI sequences), start a new log line that looks like the
/// agent's own (CR, LF, U+2028, U+2029), or reorder what a person reads (bidi overrides and
/// isolates). Every such character is written as a visible escape, `\u{1B}`; the rest of the
/// text, emoji and every script included, is kept as it is.
public enum UntrustedText {
    /// Whether a scalar must not reach a terminal or a log line as it is: C0 and C1 control
    /// characters and DEL (general category Cc), the line and paragraph separators, and the
    /// bidirectional marks, embeddings, overrides and isolates.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1
        case 0x2028, 0x2029: return true  // line and paragraph separator
        case 0x061C, 0x200E, 0x200F: return true  // Arabic letter mark, LRM, RLM
        case 0x202A...0x202E: return true  // LRE, RLE, PDF, LRO, RLO
        case 0x2066...0x2069: return true  // LRI, RLI, FSI, PDI
        default: return false
        }
    }

    /// `text` with every character of ``mustEscape(_:)`` written as `\u{XX}`. Text with none is
    /// returned unchanged (no copy).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: mustEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if mustEscape(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `text` holds a character of ``mustEscape(_:)``.
    public static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: mustEscape)
    }
}
