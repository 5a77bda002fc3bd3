#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The environment of every program the agent starts: handlers, the `urlOpener` and apps it
/// launches from `appsDirectory`. Only the variables a desktop program needs to run as the user
/// pass from the agent's own environment; the rest of it (credentials, tokens, `LD_*` and
/// anything else the agent was started with) does not.
///
/// Passed when the agent has them:
/// - the user and locale: `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `LANG`, `LANGUAGE`, every
///   `LC_*`, `TZ`;
/// - the session, so that a handler or `xdg-open` can reach the desktop: `XDG_RUNTIME_DIR`,
///   `DISPLAY`, `WAYLAND_DISPLAY`, `DBUS_SESSION_BUS_ADDRESS`, `XDG_SESSION_TYPE`,
///   `XDG_CURRENT_DESKTOP`, `XDG_DATA_DIRS`, `XDG_CONFIG_DIRS`, `XDG_DATA_HOME`,
///   `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`, `XDG_STATE_HOME`, `BROWSER` (the last few are what
///   `xdg-open` reads to choose the program).
///
/// Then the agent adds the variables of the handler contract (README, "Handlers"):
/// `HANDOFF_ACTIVITY_TYPE`, `HANDOFF_ACTIVITY_ID`, `HANDOFF_PEER`, and `HANDOFF_ACTIVITY` for a
/// handler with streams; and `HANDOFF_SOCKET` for a launched app. `HANDOFF_*` variables of the
/// agent's own environment are not passed.
public enum ChildEnvironment {
    /// The variables passed by name.
    public static let passedNames: Set<String> = [
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ",
        "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_TYPE",
        "XDG_CURRENT_DESKTOP", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME", "XDG_STATE_HOME", "BROWSER",
    ]

    /// Whether a variable of the agent's environment passes to its children.
    public static func passes(_ name: String) -> Bool {
        passedNames.contains(name) || name.hasPrefix("LC_")
    }

    /// The part of `agentEnvironment` that children get, plus `additions` (which win).
    public static func make(from agentEnvironment: [String: String], adding additions: [String: String] = [:]) -> [String: String] {
        agentEnvironment.filter { passes($0.key) }.merging(additions) { _, new in new }
    }

    /// ``make(from:adding:)`` from this process's environment.
    public static func current(adding additions: [String: String] = [:]) -> [String: String] {
        make(from: ProcessInfo.processInfo.environment, adding: additions)
    }
}
