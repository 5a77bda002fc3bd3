#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 DNS server, e.g. `198.18.1.254:53`.
public struct DNSServerAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: UInt16

    /// Parses `A.B.C.D[:PORT]` (port 53 if none); nil if it is not that.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), DNSRecord.aData(String(parts[0])) != nil else { return nil }
        host = String(parts[0])
        if parts.count == 2 {
            guard let port = UInt16(parts[1]), port > 0 else { return nil }
            self.port = port
        } else {
            port = 53
        }
    }

    public var description: String { "\(host):\(port)" }
}

/// Why a DNS exchange over UDP failed.
public enum DNSExchangeError: Error, Equatable, Sendable, CustomStringConvertible {
    case socket(String)
    case timedOut(Duration)

    public var description: String {
        switch self {
        case .socket(let what): what
        case .timedOut(let timeout): "no answer within \(timeout)"
        }
    }
}

/// One DNS request over UDP and its answer, on a thread of its own (the wait blocks in `poll()`).
public enum DNSUDPExchange {
    /// Sends `request` (a message with ID `id`) to `server` and returns the first response with
    /// that ID, and the local IPv4 address the request left from (the one to register).
    public static func exchange(_ request: [UInt8], id: UInt16, server: DNSServerAddress, timeout: Duration) async throws(DNSExchangeError) -> (response: DNSMessage, localAddress: String) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<(DNSMessage, String), DNSExchangeError>, Never>) in
            let started = DetachedThread.start(name: "dns-exchange") {
                continuation.resume(returning: blockingExchange(request, id: id, server: server, timeout: timeout))
            }
            if !started { continuation.resume(returning: .failure(.socket("could not start a thread"))) }
        }
        switch result {
        case .success(let (response, local)): return (response, local)
        case .failure(let error): throw error
        }
    }

    static func blockingExchange(_ request: [UInt8], id: UInt16, server: DNSServerAddress, timeout: Duration) -> Result<(DNSMessage, String), DNSExchangeError> {
        #if canImport(Darwin)
        let fd = socket(AF_INET, SOCK_DGRAM, 0)
        #else
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        #endif
        guard fd >= 0 else { return .failure(.socket("socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = server.port.bigEndian
        _ = inet_pton(AF_INET, server.host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return .failure(.socket("connect to \(server): \(String(cString: strerror(errno)))")) }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        var text = [CChar](repeating: 0, count: 16)
        _ = inet_ntop(AF_INET, &local.sin_addr, &text, 16)
        let localAddress = String(cString: text)
        guard send(fd, request, request.count, 0) == request.count else {
            return .failure(.socket("send to \(server): \(String(cString: strerror(errno)))"))
        }
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65535)
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return .failure(.timedOut(timeout)) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard poll(&poller, 1, milliseconds) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else {
                if count < 0, errno == EINTR { continue }
                return .failure(.socket("receive from \(server): \(String(cString: strerror(errno)))"))
            }
            // Anything that is not the answer to this request is ignored.
            if let message = try? DNSMessage(wire: Array(buffer[0..<count])), message.isResponse, message.id == id {
                return .success((message, localAddress))
            }
        }
    }
}
