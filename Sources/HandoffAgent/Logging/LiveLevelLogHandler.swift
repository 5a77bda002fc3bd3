import Logging

/// A log handler whose level is the configuration's `logLevel` now (``LiveConfiguration``), so a
/// reload changes the level of every logger already made. Setting `logLevel` on one logger
/// overrides the configuration's for that logger alone.
public struct LiveLevelLogHandler<Wrapped: LogHandler>: LogHandler {
    /// The handler that writes the entries.
    public var wrapped: Wrapped
    private let configuration: LiveConfiguration
    private var override: Logger.Level?

    public init(_ wrapped: Wrapped, configuration: LiveConfiguration) {
        self.wrapped = wrapped
        self.configuration = configuration
    }

    public var logLevel: Logger.Level {
        get { override ?? configuration.logLevel }
        set { override = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        wrapped.log(event: event)
    }
}
