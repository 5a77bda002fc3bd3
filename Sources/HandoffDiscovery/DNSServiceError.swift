/// An error reported by the DNS-SD layer (`dns_sd.h`, Avahi's compatibility library on Linux).
///
/// `code` is a `DNSServiceErrorType` (for example `-65537`, `kDNSServiceErr_Unknown`, which is how
/// Avahi reports a missing daemon, a D-Bus error or a timeout) and `operation` names the call that
/// failed, such as `"DNSServiceRegister"`.
public struct DNSServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `DNSServiceErrorType` value.
    public var code: Int32
    /// The dns_sd call or step that failed, e.g. `"DNSServiceBrowse"`.
    public var operation: String

    /// Creates an error for a `DNSServiceErrorType` returned by (or delivered to a callback of) `operation`.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// `"<operation> failed: <name of the code> (<code>)"`.
    public var description: String {
        "\(operation) failed: \(Self.name(of: code)) (\(code))"
    }

    /// Whether retrying later can help. Avahi maps a missing daemon, D-Bus errors and timeouts to
    /// `kDNSServiceErr_Unknown`, which is retryable; errors that say the request itself is wrong
    /// (bad parameters, unsupported flags, malformed TXT) are not: retrying would fail the same way.
    var isRetryable: Bool {
        switch code {
        case DNSSDConstants.errBadParam, DNSSDConstants.errBadFlags, DNSSDConstants.errUnsupported,
            DNSSDConstants.errInvalid, DNSSDConstants.errIncompatible, DNSSDConstants.errBadInterfaceIndex:
            return false
        default:
            return true
        }
    }

    /// The `kDNSServiceErr_` name of a code, without the prefix.
    static func name(of code: Int32) -> String {
        switch code {
        case 0: "NoError"
        case -65537: "Unknown"
        case -65538: "NoSuchName"
        case -65539: "NoMemory"
        case -65540: "BadParam"
        case -65541: "BadReference"
        case -65542: "BadState"
        case -65543: "BadFlags"
        case -65544: "Unsupported"
        case -65545: "NotInitialized"
        case -65547: "AlreadyRegistered"
        case -65548: "NameConflict"
        case -65549: "Invalid"
        case -65550: "Firewall"
        case -65551: "Incompatible"
        case -65552: "BadInterfaceIndex"
        case -65553: "Refused"
        case -65554: "NoSuchRecord"
        case -65555: "NoAuth"
        case -65556: "NoSuchKey"
        case -65557: "NATTraversal"
        case -65558: "DoubleNAT"
        case -65559: "BadTime"
        case -65560: "BadSig"
        case -65561: "BadKey"
        case -65562: "Transient"
        case -65563: "ServiceNotRunning"
        case -65564: "NATPortMappingUnsupported"
        case -65565: "NATPortMappingDisabled"
        case -65566: "NoRouter"
        case -65567: "PollingMode"
        case -65568: "Timeout"
        default: "error"
        }
    }
}
