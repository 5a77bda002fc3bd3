#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
/// `HANDOFF_ACTIVITY_TYPE`, `HANDOFF_ACTIVITY_ID`, `HANDOFF_PEER`, `HANDOFF_REFERRER_URL` (when the
/// activity has a referrerURL whose scheme `security.urlSchemes` allows), and `HANDOFF_ACTIVITY` for a
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
    ///
    /// It reads `environ` itself and makes strings of the passed variables only: every handler
    /// run starts here, and `ProcessInfo.environment` (a dictionary of the whole environment,
    /// made anew on each call) took about 60 µs of it.
    public static func current(adding additions: [String: String] = [:]) -> [String: String] {
        var passed: [String: String] = [:]
        var entry = environ
        while let variable = entry.pointee {
            entry += 1
            guard let equals = strchr(variable, Int32(UInt8(ascii: "="))) else { continue }
            let nameBytes = UnsafeRawBufferPointer(start: variable, count: variable.distance(to: equals))
            let name = String(decoding: nameBytes, as: UTF8.self)
            guard passes(name) else { continue }
            passed[name] = String(cString: equals + 1)  // as in ProcessInfo: a later duplicate wins
        }
        return passed.merging(additions) { _, new in new }
    }
}
