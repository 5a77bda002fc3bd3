import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many bytes each peer device has in apps' Inboxes (`handoff open`), against
/// `limits.maxInboxBytesPerDevice`.
///
/// A file counts for the device that sent it while it is still in the Inbox: an app that reads
/// and deletes its files gives the device its room back. Files being received are counted
/// (reserved) from the moment their size is accepted, so concurrent transfers cannot pass the
/// quota together. Shared by the agent's peer sessions; not persisted (after a restart the files
/// already there count for no one).
public final class InboxQuota: Sendable {
    private struct State {
        var limit: Int
        /// Per device: the files it sent that were kept, with their sizes.
        var kept: [String: [String: Int]] = [:]
        /// Per device: bytes of transfers under way.
        var reserved: [String: Int] = [:]
    }

    private let state: Mutex<State>

    public init(limit: Int) { state = Mutex(State(limit: limit)) }

    /// The most bytes one device may have in Inboxes; a reload changes it (files already kept
    /// stay, and count against the new limit).
    public var limit: Int {
        get { state.withLock { $0.limit } }
        set { state.withLock { $0.limit = newValue } }
    }

    /// Reserves `size` bytes for a transfer from `device`; false (nothing reserved) when the
    /// device would then hold more than ``limit``. Kept files that are gone no longer count.
    public func reserve(_ size: Int, for device: String) -> Bool {
        state.withLock { state in
            let kept = (state.kept[device] ?? [:]).filter { Self.exists($0.key) }
            state.kept[device] = kept
            let used = kept.values.reduce(0, +) + state.reserved[device, default: 0]
            guard size <= state.limit - used else { return false }
            state.reserved[device, default: 0] += size
            return true
        }
    }

    /// The transfer of `size` bytes ended: the file at `path` was kept, or (nil) nothing was.
    public func finish(_ size: Int, for device: String, kept path: String?) {
        state.withLock { state in
            state.reserved[device, default: 0] -= size
            if let path { state.kept[device, default: [:]][path] = size }
        }
    }

    /// Bytes the device holds now (kept files still present, and transfers under way).
    public func used(by device: String) -> Int {
        state.withLock { state in
            (state.kept[device] ?? [:]).filter { Self.exists($0.key) }.values.reduce(0, +) + state.reserved[device, default: 0]
        }
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
