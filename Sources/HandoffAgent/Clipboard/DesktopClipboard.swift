/// The desktop's clipboard, through its command-line tools: xclip on X11 (the CLIPBOARD
/// selection), wl-clipboard on Wayland (which needs the compositor's data-control protocol:
/// wlroots and KDE have it, GNOME's Mutter has not). Pure: it says which commands to run and
/// which of the clipboard's types to take; ``ClipboardSyncService`` runs them.
struct DesktopClipboard: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case x11
        case wayland
    }

    let kind: Kind

    /// The clipboard of the session in `environment`, or why there is none to join.
    static func detect(environment: [String: String]) -> Result<DesktopClipboard, ClipboardUnavailable> {
        func set(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
        if set("WAYLAND_DISPLAY") {
            if (environment["XDG_CURRENT_DESKTOP"] ?? "").uppercased().contains("GNOME") {
                return .failure(ClipboardUnavailable(reason:
                    "GNOME's Mutter has no data-control protocol, so no program can watch or set the Wayland clipboard in the background; clipboard.sync does nothing here: use `handoff copy` and `handoff paste`"))
            }
            return .success(DesktopClipboard(kind: .wayland))
        }
        if set("DISPLAY") { return .success(DesktopClipboard(kind: .x11)) }
        return .failure(ClipboardUnavailable(reason:
            "handoffd has neither DISPLAY nor WAYLAND_DISPLAY, so clipboard.sync has no desktop clipboard to join; start it in the graphical session (`systemctl --user import-environment DISPLAY WAYLAND_DISPLAY`, then restart it)"))
    }

    /// Lists the clipboard's types (one per line).
    var typesCommand: [String] {
        switch kind {
        case .x11: ["xclip", "-selection", "clipboard", "-o", "-t", "TARGETS"]
        case .wayland: ["wl-paste", "--list-types"]
        }
    }

    /// Writes the clipboard's contents of `type` to standard output.
    func readCommand(_ type: String) -> [String] {
        switch kind {
        case .x11: ["xclip", "-selection", "clipboard", "-o", "-t", type]
        case .wayland: ["wl-paste", "--no-newline", "--type", type]
        }
    }

    /// Takes the clipboard, offering standard input as `type` (the tool forks to keep serving it).
    func writeCommand(_ type: String) -> [String] {
        switch kind {
        case .x11: ["xclip", "-selection", "clipboard", "-i", "-t", type]
        case .wayland: ["wl-copy", "--type", type]
        }
    }

    /// The clipboard types tried in order: text first, then images.
    static let preferredTypes = ["text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "image/png", "image/jpeg"]

    /// Which of the clipboard's `types` to take, and the MIME type to offer it as; nil when none
    /// is one this agent offers.
    static func pick(_ types: [String]) -> (type: String, mimeType: String)? {
        guard let type = preferredTypes.first(where: types.contains) else { return nil }
        switch type {
        case "UTF8_STRING", "text/plain;charset=utf-8": return (type, "text/plain;charset=utf-8")
        case "STRING": return (type, "text/plain")
        default: return (type, type)
        }
    }

    /// The clipboard type to put an item of `mimeType` on the clipboard as: text as X11's
    /// UTF8_STRING (what programs ask for first), anything else as its MIME type.
    func putType(_ mimeType: String) -> String {
        guard kind == .x11, mimeType.hasPrefix("text/plain") else { return mimeType }
        return "UTF8_STRING"
    }
}

/// Why the desktop clipboard cannot be joined.
struct ClipboardUnavailable: Error, Sendable, Equatable {
    var reason: String
}
