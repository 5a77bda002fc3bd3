#if canImport(dnssd)
import dnssd
#else
import CDNSSD
#endif

/// A successful `DNSServiceRegister` callback: the service is registered under `name`
/// (which Avahi may have changed to resolve a conflict).
struct RegisterReply: Sendable, Hashable {
    var flags: UInt32
    var name: String
    var serviceType: String
    var domain: String
}

/// A successful `DNSServiceBrowse` callback: an instance appeared (`isAdd`) or went away
/// on `interfaceIndex`.
struct BrowseReply: Sendable, Hashable {
    var flags: UInt32
    var interfaceIndex: UInt32
    var instanceName: String
    var serviceType: String
    var domain: String

    var isAdd: Bool { flags & DNSSDConstants.flagAdd != 0 }
}

/// A successful `DNSServiceResolve` callback.
struct ResolveReply: Sendable, Hashable {
    var flags: UInt32
    var interfaceIndex: UInt32
    /// Escaped full service name, e.g. `h1._handoff._tcp.local.`.
    var fullName: String
    /// e.g. `h1.local.`.
    var hostTarget: String
    /// Host byte order.
    var port: UInt16
    var txtRecord: [UInt8]
}

/// A successful `DNSServiceQueryRecord` callback: a record was added (`isAdd`) or removed.
struct QueryReply: Sendable, Hashable {
    var flags: UInt32
    var interfaceIndex: UInt32
    var fullName: String
    var recordType: UInt16
    var recordClass: UInt16
    var recordData: [UInt8]

    var isAdd: Bool { flags & DNSSDConstants.flagAdd != 0 }
}

/// What a `DNSServiceOperation` does with the successful replies of its ref.
/// Handlers run on the poller's thread, inside `DNSServiceProcessResult`.
enum DNSServiceReplyHandler: Sendable {
    case register(@Sendable (RegisterReply) -> Void)
    case browse(@Sendable (BrowseReply) -> Void)
    case resolve(@Sendable (ResolveReply) -> Void)
    case query(@Sendable (QueryReply) -> Void)
}

/// The C callbacks given to dns_sd. Each turns its C arguments into a Swift reply, guarding every
/// pointer and length, and hands it to the `DNSServiceOperation` whose unretained pointer is the
/// callback context. Errors go to `DNSServiceOperation.callbackFailed(_:)`.
///
/// The operation outlives its ref: the ref is deallocated on the poller's thread (in the
/// operation's `close(_:)`) while the poller still holds a strong reference to the operation, and
/// callbacks only run on that thread inside `DNSServiceProcessResult`.
enum DNSServiceCallbacks {
    static let register: DNSServiceRegisterReply = { _, flags, errorCode, name, serviceType, domain, context in
        guard let operation = DNSServiceOperation.from(context: context) else { return }
        guard errorCode == DNSSDConstants.errNoError else {
            operation.callbackFailed(DNSServiceError(code: errorCode, operation: "DNSServiceRegister callback"))
            return
        }
        guard case .register(let handler) = operation.replyHandler else { return }
        handler(
            RegisterReply(
                flags: flags,
                name: string(name),
                serviceType: string(serviceType),
                domain: string(domain)))
    }

    static let browse: DNSServiceBrowseReply = {
        _, flags, interfaceIndex, errorCode, name, serviceType, domain, context in
        guard let operation = DNSServiceOperation.from(context: context) else { return }
        guard errorCode == DNSSDConstants.errNoError else {
            operation.callbackFailed(DNSServiceError(code: errorCode, operation: "DNSServiceBrowse callback"))
            return
        }
        guard case .browse(let handler) = operation.replyHandler, let name, let serviceType else { return }
        handler(
            BrowseReply(
                flags: flags,
                interfaceIndex: interfaceIndex,
                instanceName: string(name),
                serviceType: string(serviceType),
                domain: string(domain)))
    }

    static let resolve: DNSServiceResolveReply = {
        _, flags, interfaceIndex, errorCode, fullName, hostTarget, port, txtLength, txtRecord, context in
        guard let operation = DNSServiceOperation.from(context: context) else { return }
        guard errorCode == DNSSDConstants.errNoError else {
            operation.callbackFailed(DNSServiceError(code: errorCode, operation: "DNSServiceResolve callback"))
            return
        }
        guard case .resolve(let handler) = operation.replyHandler, let hostTarget else { return }
        handler(
            ResolveReply(
                flags: flags,
                interfaceIndex: interfaceIndex,
                fullName: string(fullName),
                hostTarget: string(hostTarget),
                port: UInt16(bigEndian: port),
                txtRecord: bytes(txtRecord, count: Int(txtLength))))
    }

    static let query: DNSServiceQueryRecordReply = {
        _, flags, interfaceIndex, errorCode, fullName, recordType, recordClass, dataLength, data, _, context in
        guard let operation = DNSServiceOperation.from(context: context) else { return }
        guard errorCode == DNSSDConstants.errNoError else {
            operation.callbackFailed(DNSServiceError(code: errorCode, operation: "DNSServiceQueryRecord callback"))
            return
        }
        guard case .query(let handler) = operation.replyHandler else { return }
        handler(
            QueryReply(
                flags: flags,
                interfaceIndex: interfaceIndex,
                fullName: string(fullName),
                recordType: recordType,
                recordClass: recordClass,
                recordData: bytes(data, count: Int(dataLength))))
    }

    /// A C string as a Swift string ("" for NULL; invalid UTF-8 is repaired).
    private static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    /// `count` bytes at `pointer` ([] for NULL or a non-positive count).
    private static func bytes(_ pointer: UnsafeRawPointer?, count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}
