import HandoffCore

/// Where `handoff pair TARGET` connects, as a pure decision: a device whose pairing window shows
/// that name (in the advertisements this agent cannot open yet), else an address `HOST:PORT`,
/// else an error that says what to do.
///
/// Anyone on the LAN can advertise a name, so a name two devices claim is refused: guessing
/// could pick the wrong one.
enum PairingTarget {
    /// The endpoint for `target`, given the advertisements this agent cannot open.
    static func endpoint(_ target: String, unreadable: some Collection<UnreadableService>) -> Result<PeerEndpoint, HandoffError> {
        let open = unreadable.filter { $0.pairingName?.lowercased() == target.lowercased() }
        if open.count > 1 {
            let addresses = open.map(\.endpoint.description).sorted().joined(separator: ", ")
            return .failure(.handoffFailed(
                "\(open.count) devices claim the name \(target) (\(addresses)); pair by address instead: `handoff pair HOST:PORT`, with the address the device shows in `handoff status`"))
        }
        if let entry = open.first { return .success(entry.endpoint) }
        if let address = Self.address(target) { return .success(PeerEndpoint(host: address.host, port: address.port!)) }
        let waiting = unreadable.compactMap(\.pairingName).sorted()
        let hint = waiting.isEmpty ? "no device is accepting pairing now" : "devices accepting pairing now: \(waiting.joined(separator: ", "))"
        return .failure(.connectionUnavailable(
            "no device named \(target) is accepting pairing (\(hint)). Run `handoff pair --accept` on it first, or give its address as HOST:PORT"))
    }

    /// The address `target` names, when it is one with a port (`HOST:PORT`, `[V6]:PORT`): the
    /// paired device is remembered at it, to be reached without DNS-SD.
    static func address(_ target: String) -> PeerAddress? {
        guard let address = try? PeerAddress(parsing: target), address.port != nil else { return nil }
        return address
    }
}
