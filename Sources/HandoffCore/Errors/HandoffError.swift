/// The error every failed handoff reports, carrying one of Apple's NSUserActivity error codes.
///
/// Mirrors `NSCocoaErrorDomain` codes 4608...4611 (`CocoaError.Code.userActivity…`), so iOS and
/// macOS developers see the codes they know. The type is a struct rather than an enum so that new
/// codes in the reserved range can be added without breaking clients.
public struct HandoffError: Error, Sendable, CustomStringConvertible {
    /// A stable numeric error code in Apple's reserved NSUserActivity range.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The numeric value, for example 4611.
        public var rawValue: Int

        /// Creates a code from its numeric value.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// 4608: the data for the activity was not available (for example the remote device
        /// became unavailable, or the activity was resigned).
        public static let userActivityHandoffFailed = Code(rawValue: 4608)
        /// 4609: a required connection was not available.
        public static let userActivityConnectionUnavailable = Code(rawValue: 4609)
        /// 4610: the remote application failed to send data in time.
        public static let userActivityRemoteApplicationTimedOut = Code(rawValue: 4610)
        /// 4611: the userInfo was too large to receive.
        public static let userActivityHandoffUserInfoTooLarge = Code(rawValue: 4611)

        /// The range Apple reserves for NSUserActivity errors
        /// (`NSUserActivityErrorMinimum...NSUserActivityErrorMaximum`).
        public static let reservedRange: ClosedRange<Int> = 4608...4863

        /// Whether the code lies in Apple's reserved NSUserActivity range.
        public var isInReservedRange: Bool { Self.reservedRange.contains(rawValue) }

        /// Apple's Swift name for the code, such as `userActivityHandoffUserInfoTooLarge`.
        public var name: String {
            switch self {
            case .userActivityHandoffFailed: "userActivityHandoffFailed"
            case .userActivityConnectionUnavailable: "userActivityConnectionUnavailable"
            case .userActivityRemoteApplicationTimedOut: "userActivityRemoteApplicationTimedOut"
            case .userActivityHandoffUserInfoTooLarge: "userActivityHandoffUserInfoTooLarge"
            default: isInReservedRange ? "userActivityError\(rawValue)" : "unknown\(rawValue)"
            }
        }

        public var description: String { "\(name) (\(rawValue))" }
    }

    /// The error code.
    public var code: Code
    /// What happened and what to do about it, for a person.
    public var message: String
    /// The lower-level cause, if any.
    public var underlying: (any Error & Sendable)?

    /// Creates an error with a code, a message for a person and an optional cause.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "error \(code.rawValue) \(code.name): \(message)" }

    /// 4608 with a message.
    public static func handoffFailed(_ message: String) -> HandoffError { .init(.userActivityHandoffFailed, message) }
    /// 4609 with a message.
    public static func connectionUnavailable(_ message: String) -> HandoffError {
        .init(.userActivityConnectionUnavailable, message)
    }
    /// 4610 with a message.
    public static func remoteTimedOut(_ message: String) -> HandoffError {
        .init(.userActivityRemoteApplicationTimedOut, message)
    }
    /// 4611 with a message.
    public static func userInfoTooLarge(_ message: String) -> HandoffError {
        .init(.userActivityHandoffUserInfoTooLarge, message)
    }
}

extension HandoffError: Equatable {
    /// Errors are equal when their codes and messages are: what a peer or an app can see of
    /// them (the underlying cause stays in this process).
    public static func == (lhs: HandoffError, rhs: HandoffError) -> Bool { lhs.code == rhs.code && lhs.message == rhs.message }
}
