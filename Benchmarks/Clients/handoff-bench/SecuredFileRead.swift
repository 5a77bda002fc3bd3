import HandoffAgent
import HandoffTrust
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file send's floor: what `handoff send` must do at the least, without the agents. Reads
/// `bytes` over one TLS 1.3 connection in the agents' TLS (from `bulk-serve --tls`, which hashes
/// what it sends with `--sha256`), hashes each read with SHA-256 (`hashing`) as the receiving agent
/// does, writes it to `output` in 1 MiB batches through the receiving agent's own writer
/// (`DirectFileWriter`, past the page cache where the file system allows it) and fsyncs it once at
/// the end, inside the time measured. `"sha256"` is the digest of what arrived, for the caller to
/// compare with the server's.
func securedFileRead(host: String, port: Int, bytes: Int, tls: ReferenceTLS, output: String, hashing: Bool) async throws -> Samples {
    let file = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard file >= 0 else { throw BenchError("cannot open \(output): errno \(errno)") }
    defer { close(file) }
    let writer = DirectFileWriter()
    let batchBytes = 1 << 20
    let clock = ContinuousClock()
    let start = clock.now
    let channel = try await connectBulkTLS(host: host, port: port, tls: tls)
    var digest = hashing ? ContentDigest() : nil
    var pending: [ByteBuffer] = []
    var pendingBytes = 0, received = 0, written = 0
    /// Writes the pending reads at the file's end, in one batch.
    func flush() throws {
        guard pendingBytes > 0 else { return }
        if let failed = writer.write(pending, to: file, at: written).errno { throw BenchError("write to \(output): errno \(failed)") }
        written += pendingBytes
        pending.removeAll(keepingCapacity: true)
        pendingBytes = 0
    }
    do {
        try await channel.executeThenClose { inbound, _ in
            for try await buffer in inbound {
                buffer.withUnsafeReadableBytes { digest?.update($0) }
                received += buffer.readableBytes
                pending.append(buffer)
                pendingBytes += buffer.readableBytes
                if pendingBytes >= batchBytes { try flush() }
                if received >= bytes { return }
            }
        }
    } catch let error as BenchError {
        throw error
    } catch {
        // The server closes after the last byte; an unclean TLS close then is not a failure.
        if received < bytes { throw error }
    }
    try flush()
    let wrote = clock.now
    guard fsync(file) == 0 else { throw BenchError("fsync \(output): errno \(errno)") }
    var out = bulkResult(received: received, of: bytes, in: clock.now - start)
    out.extra["write_seconds"] = .double((wrote - start).microseconds / 1e6)
    out.extra["direct"] = .bool(!writer.isDirectRefused)
    if let digest { out.extra["sha256"] = .string(digest.hex()) }
    return out
}
