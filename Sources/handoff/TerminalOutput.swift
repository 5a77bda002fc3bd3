import HandoffCore

/// Prints a line of text output. Everything in it that could act on a terminal (a peer's name or
/// title with ESC, CR or a bidi override in it) is written as a visible escape (``UntrustedText``),
/// so another device cannot draw on this screen. JSON output needs no such step: its serializer
/// escapes the same characters.
func say(_ line: String, terminator: String = "\n") {
    print(UntrustedText.escaped(line), terminator: terminator)
}
