import HandoffCore
import Logging

/// A log handler that writes every message and metadata value through ``UntrustedText``: names,
/// titles and messages from other devices reach the log, but none of their control characters,
/// so a peer can neither forge a log line (CR, LF, U+2028) nor draw on the terminal of whoever
/// reads the log. handoffd wraps its standard-error handler in it.
public struct EscapingLogHandler<Wrapped: LogHandler>: LogHandler {
    /// The handler that writes the escaped entries.
    public var wrapped: Wrapped

    public init(_ wrapped: Wrapped) { self.wrapped = wrapped }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue.mapValues(Self.escaped) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escaped) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: UntrustedText.escaped(event.message.description))
        event.metadata = event.metadata.map { $0.mapValues(Self.escaped) }
        wrapped.log(event: event)
    }

    /// A metadata value with every string in it escaped.
    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): return .string(UntrustedText.escaped(text))
        case .stringConvertible(let convertible):
            let text = convertible.description
            return UntrustedText.needsEscaping(text) ? .string(UntrustedText.escaped(text)) : value
        case .array(let values): return .array(values.map(escaped))
        case .dictionary(let values): return .dictionary(values.mapValues(escaped))
        }
    }
}
