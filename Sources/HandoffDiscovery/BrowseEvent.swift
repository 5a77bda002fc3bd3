/// A change seen by `ServiceBrowser`.
public enum BrowseEvent: Sendable, Hashable {
    /// A service was resolved for the first time, or its TXT record, port, host, addresses or
    /// interface changed. Carries the complete current state.
    case resolved(DiscoveredService)
    /// A service that was reported as `.resolved` went away (its goodbye arrived, its records
    /// expired, or it was not found again after the local daemon restarted).
    case removed(instanceName: String)
}
