#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Default locations shared by the agent and the CLI.
public enum DefaultPaths {
    /// `$XDG_RUNTIME_DIR/handoff/handoffd.sock`, else `/tmp/handoff-UID/handoffd.sock`. The
    /// `/tmp` one is used only if ``ControlSocketCheck`` passes: a real directory (not a symbolic
    /// link) owned by this uid with mode 0700, and an agent of this uid listening; clients refuse
    /// it otherwise, saying what is wrong, and the agent will not start in it.
    public static func controlSocket(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/handoff/handoffd.sock"
        }
        return "/tmp/handoff-\(getuid())/handoffd.sock"
    }
}
