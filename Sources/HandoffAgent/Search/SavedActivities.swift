import HandoffCore
import HandoffSaved
import Synchronization

/// The agent's saved activities (``SavedActivityIndex``), opened at first use from
/// `<stateDirectory>/saved-activities.sqlite`, so that an agent nobody searches never creates it.
/// A file that cannot be opened fails each use with an error that names it; the agent runs on.
public final class SavedActivities: Sendable {
    /// The index file's name in the state directory.
    public static let fileName = "saved-activities.sqlite"

    private let path: String?
    private let opened = Mutex<Result<SavedActivityIndex, HandoffError>?>(nil)

    /// - Parameter path: the index file; nil keeps the index in memory (tests).
    public init(path: String?) { self.path = path }

    /// The index, opened now if it was not.
    public func index() throws(HandoffError) -> SavedActivityIndex {
        try opened.withLock { opened throws(HandoffError) in
            if let opened { return try opened.get() }
            let result: Result<SavedActivityIndex, HandoffError>
            do {
                result = .success(try SavedActivityIndex(path: path))
            } catch {
                result = .failure(.handoffFailed("cannot open the saved activities at \(path ?? "memory"): \(error); move the file away and the agent makes a new one"))
            }
            opened = result
            return try result.get()
        }
    }
}
