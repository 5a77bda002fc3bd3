extension ControlRequest {
    /// Where `search` looks.
    public enum SearchScope: String, Sendable, Equatable {
        /// This device only.
        case local
        /// This device and every reachable paired device.
        case all
    }

    /// Which saved activities `deleteSaved` deletes.
    public enum SavedSelection: Sendable, Equatable {
        case persistentIdentifiers([String])
        case all
    }

    /// The most results `search` returns.
    public static let maximumSearchLimit = PeerSearchRequest.maximumLimit

    /// `search`'s and `deleteSaved`'s arguments on the wire.
    func addSearchArguments(to body: inout [String: JSONValue]) {
        switch self {
        case .search(let query, let devices, let limit):
            body["query"] = .string(query)
            body["devices"] = .string(devices.rawValue)
            body["limit"] = .integer(limit)
        case .deleteSaved(.all): body["all"] = .bool(true)
        case .deleteSaved(.persistentIdentifiers(let ids)): body["persistentIdentifiers"] = .array(ids.map { .string($0) })
        default: break
        }
    }

    static func search(_ body: JSONValue) throws(HandoffError) -> ControlRequest {
        guard let query = body["query"]?.stringValue, !query.isEmpty, query.utf8.count <= PeerSearchRequest.maximumQueryBytes else {
            throw .handoffFailed("search needs \"query\": 1 to \(PeerSearchRequest.maximumQueryBytes) bytes of words to look for")
        }
        let devices: SearchScope
        switch body["devices"] {
        case nil, .null?: devices = .local
        case .string(let text)?:
            guard let scope = SearchScope(rawValue: text) else { throw .handoffFailed("search: \"devices\" must be \"local\" or \"all\", not \"\(text)\"") }
            devices = scope
        default: throw .handoffFailed("search: \"devices\" must be \"local\" or \"all\"")
        }
        var limit = 20
        if let value = body["limit"], value != .null {
            guard let number = value.int64Value, (1...Int64(maximumSearchLimit)).contains(number) else {
                throw .handoffFailed("search: \"limit\" must be a whole number from 1 to \(maximumSearchLimit)")
            }
            limit = Int(number)
        }
        return .search(query: query, devices: devices, limit: limit)
    }

    static func savedSelection(_ body: JSONValue) throws(HandoffError) -> SavedSelection {
        let hint = "deleteSaved needs \"persistentIdentifiers\": [\"ID\", ...] or \"all\": true"
        if body["all"]?.boolValue == true {
            guard body["persistentIdentifiers"] == nil else { throw .handoffFailed("\(hint), not both") }
            return .all
        }
        guard let items = body["persistentIdentifiers"]?.arrayValue, !items.isEmpty else { throw .handoffFailed(hint) }
        var ids: [String] = []
        for item in items {
            guard let id = item.stringValue, !id.isEmpty else { throw .handoffFailed("deleteSaved: each persistent identifier must be a non-empty string") }
            ids.append(id)
        }
        return .persistentIdentifiers(ids)
    }
}
