#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Default locations shared by the agent and the CLI.
public enum DefaultPaths {
    /// `$XDG_RUNTIME_DIR/handoff/handoffd.sock`, else `/tmp/handoff-UID/handoffd.sock`.
    public static func controlSocket(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/handoff/handoffd.sock"
        }
        return "/tmp/handoff-\(getuid())/handoffd.sock"
    }
}
