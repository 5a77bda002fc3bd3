import HandoffCore

/// Connecting to a peer at each of its addresses in turn: a lighter Happy Eyeballs (RFC 8305)
/// without the parallel attempts. Discovery gives the addresses in
/// ``IPAddressText/connectionOrder(_:)`` (IPv6 of wider scope, IPv4, IPv6 link-local); a host
/// with an address that does not route (an IPv6 prefix without a route, a stale address) is
/// still reached at the next one. Only the socket connect falls back: a TLS or pairing failure
/// at an address that answered is the peer's answer, and is not retried elsewhere.
enum AddressFallback {
    /// The result of `attempt` at the first of `endpoint.hosts` where it succeeds; the last
    /// failure when none does.
    static func connect<T>(_ endpoint: PeerEndpoint, _ attempt: (String) async throws -> T) async throws -> T {
        var lastError: (any Error)?
        for host in endpoint.hosts {
            do { return try await attempt(host) } catch {
                lastError = error
                if Task.isCancelled { break }
            }
        }
        throw lastError!
    }
}
