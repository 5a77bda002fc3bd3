/// A failure to read, create or write this device's identity or its list of paired devices.
///
/// The message names the file involved and says what to do, for example
/// `trust store /home/me/.config/handoff/trust.json is corrupt (…): remove it and pair again`.
public struct TrustStoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong and what to do about it, for a person.
    public var message: String

    /// Creates an error with a message for a person.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
