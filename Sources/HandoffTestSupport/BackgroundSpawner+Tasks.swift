import HandoffCore

extension BackgroundSpawner {
    /// Runs each piece of work in a task of its own: for tests and benchmark clients, which have
    /// no agent whose `BackgroundWork` would own it.
    public static let tasks = BackgroundSpawner { work, _ in Task { await work() } }
}
