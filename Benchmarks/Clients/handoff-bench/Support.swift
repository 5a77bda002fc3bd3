import HandoffAgent
import HandoffCore
import HandoffTestSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - Errors, clocks, output

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// CLOCK_REALTIME in nanoseconds: comparable across processes and network namespaces.
func realtimeNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

extension Duration {
    var microseconds: Double {
        let (s, a) = components
        return Double(s) * 1e6 + Double(a) / 1e12
    }
}

func sleepMilliseconds(_ ms: Int) {
    guard ms > 0 else { return }
    var request = timespec(tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
}

/// One measurement's result, printed as a single JSON line on standard output:
/// `{"samples_us": [...], "errors": N, "error_messages": [...], ...extra}`.
struct Samples {
    var samples: [Double] = []
    var errors = 0
    var errorMessages: [String] = []
    var extra: [String: JSONValue] = [:]

    mutating func fail(_ message: String) {
        errors += 1
        if errorMessages.count < 5 { errorMessages.append(message) }
    }

    func printJSON() {
        var object = extra
        object["samples_us"] = .array(samples.map { .double(($0 * 10).rounded() / 10) })
        object["errors"] = .integer(errors)
        object["error_messages"] = .array(errorMessages.map { .string($0) })
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        object["process_cpu_ms"] = .double(cpu.rounded())
        print(JSONValue.object(object).serialized)
        fflush(nil)
    }
}

// MARK: - Arguments

/// `--key value` options and flags.
struct Arguments {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    init(_ args: ArraySlice<String>) throws {
        var i = args.startIndex
        while i < args.endIndex {
            let arg = args[i]
            guard arg.hasPrefix("--") else { throw BenchError("unexpected argument '\(arg)'") }
            let key = String(arg.dropFirst(2))
            if i + 1 < args.endIndex, !args[i + 1].hasPrefix("--") {
                values[key] = args[i + 1]
                i += 2
            } else {
                flags.insert(key)
                i += 1
            }
        }
    }

    func string(_ key: String, default value: String? = nil) throws -> String {
        if let v = values[key] { return v }
        if let value { return value }
        throw BenchError("missing --\(key)")
    }

    func int(_ key: String, default value: Int? = nil) throws -> Int {
        if let v = values[key] {
            guard let n = Int(v) else { throw BenchError("--\(key) must be an integer, got '\(v)'") }
            return n
        }
        if let value { return value }
        throw BenchError("missing --\(key)")
    }

    func flag(_ key: String) -> Bool { flags.contains(key) }
}

// MARK: - Control socket (blocking, no NIO: as little client overhead as possible)

/// A blocking client of an agent's control socket: frames `[kind u8][len u32 BE][payload]`,
/// kind 0x20 request JSON, 0x21 response JSON (docs/PROTOCOL.md, "Control socket").
final class ControlConnection {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("socket path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let e = errno
            close(fd)
            throw BenchError("connect \(path): \(String(cString: strerror(e)))")
        }
    }

    deinit { close(fd) }

    /// Sends a request and returns the response's `ok` value; throws on `error` responses.
    func call(_ command: String, _ arguments: [String: JSONValue] = [:]) throws -> JSONValue {
        try send(command, arguments)
        return try answer()
    }

    /// Sends a request without waiting for its answer (``answer()`` reads it).
    func send(_ command: String, _ arguments: [String: JSONValue] = [:]) throws {
        try send(frame: Self.requestFrame(command, arguments))
    }

    /// Sends a request made beforehand with ``requestFrame(_:_:)``, without waiting for its answer.
    func send(frame: [UInt8]) throws {
        try writeAll(frame)
    }

    /// A request as it goes on the socket: the `controlRequest` frame of its JSON.
    static func requestFrame(_ command: String, _ arguments: [String: JSONValue] = [:]) -> [UInt8] {
        var members = arguments
        members["command"] = .string(command)
        let payload = Array(JSONValue.object(members).serialized.utf8)
        var frame: [UInt8] = [0x20]
        let n = UInt32(payload.count)
        frame += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        frame += payload
        return frame
    }

    /// The next answer's `ok` value; throws on `error` answers.
    func answer() throws -> JSONValue {
        let body = try readResponse()
        if let ok = body["ok"] { return ok }
        if let error = body["error"] {
            throw BenchError("agent error \(error["code"]?.int64Value ?? 0): \(error["message"]?.stringValue ?? "?")")
        }
        throw BenchError("response without ok or error")
    }

    /// The next `controlResponse` frame's JSON: an answer, or after `watch` an event.
    func readResponse() throws -> JSONValue {
        let header = try readExactly(5)
        guard header[0] == 0x21 else { throw BenchError("unexpected frame kind 0x\(String(header[0], radix: 16))") }
        let length = Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4])
        return try JSONValue(parsing: try readExactly(length))
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw BenchError("write: errno \(errno)")
            }
            offset += n
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw BenchError("read: errno \(errno)")
            }
            if n == 0 { throw BenchError("the agent closed the connection") }
            offset += n
        }
        return out
    }
}

/// Connects, retrying while the socket does not exist yet (an agent that is starting).
func connectControl(_ path: String) -> ControlConnection? {
    try? ControlConnection(path: path)
}

// MARK: - Processes

/// Starts `/bin/sh -c "exec CMD"` in its own process group, with default signals and an empty mask
/// (HandoffTestSupport's HarnessProcess); the returned pid is CMD's once it has exec'd. stdin is
/// /dev/null, stderr this process's.
func spawnShell(_ command: String, stdout: HarnessProcess.Stream = .descriptor(STDOUT_FILENO)) throws -> pid_t {
    try HarnessProcess.spawn(["/bin/sh", "-c", "exec " + command], environment: ProcessInfo.processInfo.environment,
                           stdout: stdout, stderr: .descriptor(STDERR_FILENO)).pid
}

/// Sends `signal` and waits up to `timeoutMs` for the process to exit (then SIGKILL).
func stopProcess(_ pid: pid_t, signal: Int32 = SIGTERM, timeoutMs: Int = 6000) {
    kill(pid, signal)
    var status: Int32 = 0
    var waited = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
        if waited >= timeoutMs {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            return
        }
        sleepMilliseconds(10)
        waited += 10
    }
}
