#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `handoff browser-host` offers of the browser, as a pure value: the page of the focused
/// tab of the focused window, as an `NSUserActivityTypeBrowsingWeb` activity, as Safari offers
/// its current page. The extension tells it each change; it says what to publish and when to
/// resign, with the time as an input (the blur grace runs on the caller's clock).
///
/// - Only `http` and `https` pages are offered (never `file:`, `chrome:`, `about:` or a page of
///   another extension), and never a page of a private window: such a page resigns what was offered.
/// - When the browser loses focus, the page stays on offer for ``blurGrace`` (a person switching
///   to another app for a moment), then is resigned; focus back offers it again.
/// - When the browser quits (the extension's port closes), the page is resigned.
public struct BrowserPageTracker<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the extension says.
    public enum Message: Sendable, Equatable {
        /// The focused tab shows this page now.
        case page(url: String, title: String?, incognito: Bool)
        /// No browser window has the focus.
        case blur
        /// A browser window has the focus again.
        case focus
    }

    /// What to do.
    public enum Action: Sendable, Equatable {
        /// Offer this page (the one offered before, if any, is replaced).
        case publish(url: URL, title: String?)
        /// Offer nothing.
        case resign
    }

    /// How long the page stays on offer after the browser lost the focus.
    public static var blurGrace: Duration { .seconds(60) }

    private var page: Page?
    private var offered: Page?

    private struct Page: Sendable, Equatable {
        var url: URL
        var title: String?
    }
    private var blurredAt: Instant?

    public init() {}

    /// When ``tick(now:)`` should be called next (the end of the blur grace), if at all.
    public var deadline: Instant? {
        guard offered != nil, let blurredAt else { return nil }
        return blurredAt.advanced(by: Self.blurGrace)
    }

    /// The extension said `message` at `now`.
    public mutating func received(_ message: Message, now: Instant) -> Action? {
        switch message {
        case .page(let text, let title, let incognito):
            guard !incognito, let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                page = nil
                return resign()
            }
            page = Page(url: url, title: title.flatMap { $0.isEmpty ? nil : $0 })
            blurredAt = nil
            return publish()
        case .blur:
            if blurredAt == nil { blurredAt = now }
            return nil
        case .focus:
            blurredAt = nil
            return publish()
        }
    }

    /// Time passed: past the blur grace, the page is resigned.
    public mutating func tick(now: Instant) -> Action? {
        guard let deadline, now >= deadline else { return nil }
        return resign()
    }

    /// The browser quit: nothing stays on offer.
    public mutating func closed() -> Action? {
        page = nil
        return resign()
    }

    private mutating func publish() -> Action? {
        guard let page, blurredAt == nil, page != offered else { return nil }
        offered = page
        return .publish(url: page.url, title: page.title)
    }

    private mutating func resign() -> Action? {
        guard offered != nil else { return nil }
        offered = nil
        return .resign
    }
}

extension BrowserPageTracker.Message {
    /// Reads a message of the extension: `{"type": "page", "url", "title", "incognito"}`,
    /// `{"type": "blur"}` or `{"type": "focus"}`; nil for anything else.
    public init?(json: JSONValue) {
        switch json["type"]?.stringValue {
        case "page":
            guard let url = json["url"]?.stringValue else { return nil }
            self = .page(url: url, title: json["title"]?.stringValue, incognito: json["incognito"]?.boolValue ?? false)
        case "blur": self = .blur
        case "focus": self = .focus
        default: return nil
        }
    }
}
