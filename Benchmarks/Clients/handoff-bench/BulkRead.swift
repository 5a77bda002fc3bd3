import HandoffAgent
import HandoffCore
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One bulk transfer's sample: its time when all `bytes` arrived, its throughput either way.
func bulkResult(received: Int, of bytes: Int, in elapsed: Duration) -> Samples {
    var out = Samples()
    if received == bytes { out.samples.append(elapsed.microseconds) } else { out.fail("received \(received) of \(bytes) bytes") }
    out.extra["bytes_total"] = .integer(received)
    out.extra["throughput_mib_s"] = .double(Double(received) / (elapsed.microseconds / 1e6) / 1_048_576)
    return out
}

/// Reads `bytes` from one bare TCP connection; with `output`, writes each read to that file
/// (created, truncated) as it comes and fsyncs it once at the end, inside the time measured, as
/// `nc host port > file; sync` would: `write_seconds` is the time to the last write,
/// `fsync_seconds` the fsync's. With `direct`, the file is written in 1 MiB batches by the
/// receiving agent's own writer (`DirectFileWriter`: past the page cache where the file system
/// allows it); `"direct"` says whether it did (else it was written buffered).
func bulkRead(host: String, port: Int, bytes: Int, output: String? = nil, direct: Bool = false) throws -> Samples {
    if direct, output == nil { throw BenchError("--direct needs --output FILE") }
    var file: Int32 = -1
    if let output {
        file = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw BenchError("cannot open \(output): errno \(errno)") }
    }
    defer { if file >= 0 { close(file) } }
    let writer = direct ? DirectFileWriter() : nil
    let batchBytes = 1 << 20
    let clock = ContinuousClock()
    let start = clock.now
    let fd = try connectTCP(host: host, port: port)
    var buffer = ByteBuffer()
    buffer.reserveCapacity(batchBytes)
    var received = 0, written = 0
    /// Writes what the buffer holds at the file's end.
    func flush() throws {
        guard file >= 0, buffer.readableBytes > 0 else { return buffer.clear() }
        let done = writer?.write([buffer], to: file, at: written)
            ?? buffer.withUnsafeReadableBytes { DirectFileWriter.pwriteAll(file, $0, at: written) }
        if let failed = done.errno { throw BenchError("write to \(output ?? ""): errno \(failed)") }
        written += buffer.readableBytes
        buffer.clear()
    }
    while true {
        let room = batchBytes - buffer.readableBytes
        var n = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: room) {
            n = read(fd, $0.baseAddress!, room)
            return max(n, 0)
        }
        if n < 0 { if errno == EINTR { continue }; break }
        if n == 0 { break }
        received += n
        if buffer.readableBytes == batchBytes { try flush() }
    }
    close(fd)
    try flush()
    guard file >= 0 else { return bulkResult(received: received, of: bytes, in: clock.now - start) }
    let wrote = clock.now
    guard fsync(file) == 0 else { throw BenchError("fsync \(output ?? ""): errno \(errno)") }
    let end = clock.now
    var out = bulkResult(received: received, of: bytes, in: end - start)
    out.extra["write_seconds"] = .double((wrote - start).microseconds / 1e6)
    out.extra["fsync_seconds"] = .double((end - wrote).microseconds / 1e6)
    if let writer { out.extra["direct"] = .bool(!writer.isDirectRefused) }
    return out
}

/// A blocking TCP connection to `host` (IPv4) at `port`.
func connectTCP(host: String, port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
        close(fd)
        throw BenchError("bad address \(host)")
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        throw BenchError("connect: errno \(errno)")
    }
    return fd
}
