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

    /// `$XDG_CONFIG_HOME/handoff/handoffd.json`, else `~/.config/handoff/handoffd.json`: the
    /// config handoffd reads when it is given no `--config` (if the file exists), and the one
    /// scripts/install writes. Nil when neither `XDG_CONFIG_HOME` nor `HOME` is set.
    public static func configFile(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/handoff/handoffd.json"
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/handoff/handoffd.json"
    }
}
