/// The commit the binaries were built from. scripts/install writes `git describe --always --dirty`
/// here for its build and puts this committed fallback back afterwards.
enum BuildCommit {
    static let value = "unknown commit"
}
