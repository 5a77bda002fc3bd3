extension ControlRequest {
    /// What `link` makes a link to.
    public enum LinkSource: Sendable, Equatable {
        /// An activity this host holds: its ID or a unique prefix of it (at least 4 characters), as `handoff status` shows it.
        case held(String)
        /// An activity saved on this host for search, by its persistent identifier.
        case saved(persistentIdentifier: String)
    }

    /// `link`'s and `continueLink`'s arguments on the wire.
    func addLinkArguments(to body: inout [String: JSONValue]) {
        switch self {
        case .link(.held(let id)): body["id"] = .string(id)
        case .link(.saved(let persistentIdentifier)): body["persistentIdentifier"] = .string(persistentIdentifier)
        case .continueLink(let text): body["link"] = .string(text)
        default: break
        }
    }

    static func linkSource(_ body: JSONValue) throws(HandoffError) -> LinkSource {
        let hint = "link needs \"id\" (a held activity's ID or a unique prefix, as `handoff status` shows it) or \"persistentIdentifier\" (a saved activity's)"
        switch (body["id"]?.stringValue, body["persistentIdentifier"]?.stringValue) {
        case (let id?, nil) where !id.isEmpty: return .held(id)
        case (nil, let persistentIdentifier?) where !persistentIdentifier.isEmpty: return .saved(persistentIdentifier: persistentIdentifier)
        default: throw .handoffFailed(hint + ", one of them")
        }
    }

    static func linkText(_ body: JSONValue) throws(HandoffError) -> String {
        guard let text = body["link"]?.stringValue, !text.isEmpty else {
            throw .handoffFailed("continueLink needs \"link\": a link as `handoff link` prints it (\(HandoffLink.prefix)…)")
        }
        return text
    }
}
