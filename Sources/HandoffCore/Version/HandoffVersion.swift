/// The version both executables print for `--version`.
public enum HandoffVersion {
    /// The release number.
    public static let number = "0.1.0"

    /// `0.1.0 (COMMIT)`: the number and the commit the binaries were built from (`git describe`,
    /// written into ``BuildCommit`` by scripts/install; "unknown commit" in other builds).
    public static var description: String { "\(number) (\(BuildCommit.value))" }
}
