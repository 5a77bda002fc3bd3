/// Something a `DNSServicePoller` watches: a `DNSServiceOperation` (its ref's socket), or in tests
/// any descriptor, such as a pipe.
///
/// The poller calls these methods only on its own thread, one at a time, in this order: `open()`
/// once; then `signalled()` and `descriptorReady(events:)` any number of times while the source
/// is polled; then `close(_:)` once, after which nothing else is called (a source added just
/// before the poller stopped gets only `close(.pollerStopped)`). A method that returns false ends
/// the source: the poller stops polling its descriptor and calls `close(.ended)`.
protocol PolledSource: AnyObject, Sendable {
    /// Called once, when the poller takes the source on. Returns the descriptor to poll for
    /// reading, or nil if the source has already ended (`close(.ended)` follows at once).
    func open() -> Int32?

    /// The source's descriptor polled readable, hung up, in error or invalid; `events` are
    /// `poll()`'s `revents`. Returns false when the source has ended.
    func descriptorReady(events: Int16) -> Bool

    /// Called after `open()` and whenever the source was signalled with
    /// `DNSServicePoller.signal(_:)`: the source runs what was queued for its thread. Returns false
    /// when the source has ended.
    func signalled() -> Bool

    /// Called once, when the poller no longer polls the source's descriptor: the source releases
    /// it (a dns_sd ref is deallocated here).
    func close(_ reason: PolledSourceEnd)
}

/// Why a `DNSServicePoller` let go of a source.
enum PolledSourceEnd: Sendable, Equatable {
    /// `open()` returned nil, or a call returned false: the source ended itself.
    case ended
    /// The poller was stopped while the source was polled (or before it was opened).
    case pollerStopped
    /// `poll()` itself failed with this errno; the poller dropped every source.
    case pollFailed(errno: Int32)
}
