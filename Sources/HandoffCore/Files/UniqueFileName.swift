/// The names tried, in turn, for a file that must not replace another: `name`, then
/// `name (2).ext`, `name (3).ext`...
public enum UniqueFileName {
    /// The name for the `attempt`th try (1 is `name` itself).
    public static func candidate(_ name: String, attempt: Int) -> String {
        guard attempt > 1 else { return name }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "\(name) (\(attempt))" }
        return "\(name[..<dot]) (\(attempt))\(name[dot...])"
    }
}
