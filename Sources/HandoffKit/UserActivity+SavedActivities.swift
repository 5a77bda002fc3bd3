import HandoffCore

extension UserActivity {
    // MARK: Saved activities (NSUserActivity's class methods)

    /// Deletes the activities this app saved for search (`isEligibleForSearch`) with these
    /// persistent identifiers. Activities other apps saved are never touched. The running
    /// ``HandoffApplication`` asks its agent (``HandoffApplication/deleteSavedUserActivities(withPersistentIdentifiers:)``
    /// names the application, for a process that runs more than one).
    public static func deleteSavedUserActivities(withPersistentIdentifiers persistentIdentifiers: [String]) async throws(HandoffError) {
        try await HandoffApplication.running().deleteSavedUserActivities(withPersistentIdentifiers: persistentIdentifiers)
    }

    /// NSUserActivity's callback form of ``deleteSavedUserActivities(withPersistentIdentifiers:)``,
    /// as Apple declares it: the handler runs when the deletion is over, and takes no error (use
    /// the async form to learn one).
    public static func deleteSavedUserActivities(withPersistentIdentifiers persistentIdentifiers: [String],
                                                 completionHandler: @escaping @Sendable () -> Void) {
        Task {
            try? await deleteSavedUserActivities(withPersistentIdentifiers: persistentIdentifiers)
            completionHandler()
        }
    }

    /// Deletes every activity this app saved for search.
    public static func deleteAllSavedUserActivities() async throws(HandoffError) {
        try await HandoffApplication.running().deleteAllSavedUserActivities()
    }

    /// NSUserActivity's callback form of ``deleteAllSavedUserActivities()``, as Apple declares it:
    /// the handler takes no error (use the async form to learn one).
    public static func deleteAllSavedUserActivities(completionHandler: @escaping @Sendable () -> Void) {
        Task {
            try? await deleteAllSavedUserActivities()
            completionHandler()
        }
    }
}
