import Logging

/// The syslog priority of a swift-log level, as journald reads it from a `<N>` line prefix
/// (sd-daemon(3)): 2 crit, 3 err, 4 warning, 5 notice, 6 info, 7 debug.
public enum SyslogPriority {
    /// The priority journald files a line of this level under.
    public static func of(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
