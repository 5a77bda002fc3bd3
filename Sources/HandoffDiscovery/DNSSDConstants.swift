/// The few `dns_sd.h` constants this module uses, with fixed Swift types.
///
/// The header declares them in anonymous C enums, which Swift imports with platform-dependent
/// integer types; spelling the values out keeps the code identical on Linux and macOS.
enum DNSSDConstants {
    static let errNoError: Int32 = 0
    static let errUnknown: Int32 = -65537
    static let errBadParam: Int32 = -65540
    static let errBadFlags: Int32 = -65543
    static let errUnsupported: Int32 = -65544
    static let errNameConflict: Int32 = -65548
    static let errInvalid: Int32 = -65549
    static let errIncompatible: Int32 = -65551
    static let errBadInterfaceIndex: Int32 = -65552

    /// `kDNSServiceFlagsMoreComing`.
    static let flagMoreComing: UInt32 = 0x1
    /// `kDNSServiceFlagsAdd`.
    static let flagAdd: UInt32 = 0x2

    /// `kDNSServiceInterfaceIndexAny`.
    static let interfaceIndexAny: UInt32 = 0

    /// `kDNSServiceType_A`.
    static let typeA: UInt16 = 1
    /// `kDNSServiceType_AAAA`.
    static let typeAAAA: UInt16 = 28
    /// `kDNSServiceType_TXT`.
    static let typeTXT: UInt16 = 16
    /// `kDNSServiceClass_IN`.
    static let classIN: UInt16 = 1
}
