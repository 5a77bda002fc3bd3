#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which URLs from another device this host will act on.
///
/// A peer chooses an activity's `webpageURL` and the URL it sends with `handoff open`. Handed
/// unchecked to `xdg-open`, a `file:`, `smb:` or app-specific URL opens local files, mounts
/// shares or starts programs without the confirmation a browser shows; a string that starts with
/// `-` is read as an option by a browser used as the opener. So:
/// - a web page URL is opened only if its scheme is allowed (http and https by default, more with
///   the config key `security.urlSchemes`, one by one) and it is an absolute URL whose text starts
///   with that scheme (so it can never look like an option) and holds no control character or
///   space;
/// - a URL sent with `handoff open` is never a `file:` URL (an app gets a file URL only for a file
///   the agent wrote to its Inbox) and must have a scheme.
public struct PeerURLPolicy: Sendable, Equatable {
    /// The schemes a web page URL may have, lowercased.
    public var webpageSchemes: Set<String>

    /// The default: http and https, as Apple allows for `webpageURL`.
    public static let defaultWebpageSchemes: [String] = ["http", "https"]

    public init(webpageSchemes: [String] = PeerURLPolicy.defaultWebpageSchemes) {
        self.webpageSchemes = Set(webpageSchemes.map { $0.lowercased() })
    }

    /// Why a scheme name cannot be allowed, or nil if it can: RFC 3986 syntax, and never `file`.
    public static func problem(withScheme scheme: String) -> String? {
        let lowered = scheme.lowercased()
        guard let first = lowered.unicodeScalars.first, ("a"..."z").contains(first),
            lowered.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) })
        else { return "\"\(scheme)\" is not a URL scheme (a letter, then letters, digits, +, - or .)" }
        if lowered == "file" { return "file URLs name files on this host; peers send files with `handoff open` instead" }
        return nil
    }

    /// The text to hand the URL opener for an activity's web page URL, or the error that says
    /// why it is not opened.
    public func webpageArgument(_ url: URL) -> Result<String, HandoffError> {
        let text = url.absoluteString
        guard let scheme = url.scheme?.lowercased(), webpageSchemes.contains(scheme) else {
            let allowed = webpageSchemes.sorted().joined(separator: ", ")
            return .failure(.handoffFailed(
                "the activity's web page URL has the scheme \(url.scheme.map { "\"\(UntrustedText.escaped($0))\"" } ?? "(none)"), which this host does not open (allowed: \(allowed); config key security.urlSchemes); nothing was opened"))
        }
        guard text.lowercased().hasPrefix(scheme + ":"), !Self.hasControlOrSpace(text) else {
            return .failure(.handoffFailed("the activity's web page URL is malformed (\(UntrustedText.escaped(text))); nothing was opened"))
        }
        if scheme == "http" || scheme == "https", (url.host ?? "").isEmpty {
            return .failure(.handoffFailed("the activity's web page URL has no host (\(UntrustedText.escaped(text))); nothing was opened"))
        }
        return .success(text)
    }

    /// Whether a URL sent with `handoff open` may be handed to an app: nil if it may, else the
    /// error to answer the sender with.
    public static func openProblem(_ url: URL) -> HandoffError? {
        guard let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            return .handoffFailed("the URL sent has no scheme; send an absolute URL, or the file itself")
        }
        if scheme == "file" {
            return .handoffFailed("file URLs are not accepted from another device (they would name a file on this host); send the file itself: handoff open FILE")
        }
        if hasControlOrSpace(url.absoluteString) { return .handoffFailed("the URL sent holds control characters or spaces; nothing was opened") }
        return nil
    }

    private static func hasControlOrSpace(_ text: String) -> Bool {
        text.unicodeScalars.contains { UntrustedText.mustEscape($0) || $0.properties.isWhitespace }
    }
}
