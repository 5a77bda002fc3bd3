import HandoffCore

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `handoff send`'s progress: on a terminal, a bar on standard error (bytes, rate, time left);
/// with `--json`, progress events as JSON lines on standard output.
final class TransferProgress: @unchecked Sendable {
    private let json: Bool
    private let bar: Bool
    /// The bytes to send (nil while standard input's size is unknown).
    private let total: Int?
    private let started = ContinuousClock.now
    private var lastShown = ContinuousClock.now
    private let lock = NSLock()
    private(set) var sent = 0

    init(total: Int?, json: Bool) {
        self.total = total
        self.json = json
        bar = !json && isatty(STDERR_FILENO) == 1
    }

    /// Seconds since the send started.
    var elapsed: Double {
        let (seconds, attoseconds) = (ContinuousClock.now - started).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// `bytes` more were handed to the agent.
    func add(_ bytes: Int) {
        lock.lock()
        defer { lock.unlock() }
        sent += bytes
        let now = ContinuousClock.now
        guard now - lastShown >= .milliseconds(200) else { return }
        lastShown = now
        show()
    }

    private func show() {
        let rate = elapsed > 0 ? Double(sent) / elapsed : 0
        if json {
            var event: [String: JSONValue] = ["event": .string("progress"), "sent": .integer(sent), "rate": .integer(Int(rate))]
            if let total { event["total"] = .integer(total) }
            emit(.object(event))
        } else if bar {
            var line = "\(ByteCount.text(sent))"
            if let total, total > 0 {
                let fraction = min(1, Double(sent) / Double(total))
                let filled = Int(fraction * 30)
                let left = rate > 0 ? Int(Double(total - sent) / rate) : 0
                line = "[\(String(repeating: "#", count: filled))\(String(repeating: " ", count: 30 - filled))] \(Int(fraction * 100))% "
                    + "\(ByteCount.text(sent)) of \(ByteCount.text(total)), \(ByteCount.text(Int(rate)))/s, \(left / 60):\(String(format: "%02d", left % 60)) left"
            } else {
                line += ", \(ByteCount.text(Int(rate)))/s"
            }
            FileHandle.standardError.write(Data("\r\(line)\u{1B}[K".utf8))
        }
    }

    /// One file's receipt.
    func file(_ receipt: FileReceipt) {
        lock.lock()
        defer { lock.unlock() }
        if json {
            var event: [String: JSONValue] = ["event": .string("file"), "index": .integer(receipt.index), "name": .string(receipt.name),
                                              "start": .integer(receipt.start), "bytes": .integer(receipt.bytes)]
            if let error = receipt.error { event["error"] = ControlProtocol.errorJSON(error) }
            emit(.object(event))
        } else if receipt.error == nil {
            clearBar()
            let resumed = receipt.start > 0 ? " (resumed after \(ByteCount.text(receipt.start)))" : ""
            say("sent \(receipt.name)\(resumed)")
        }
    }

    /// The send is over.
    func done(files: Int, bytes: Int) {
        lock.lock()
        defer { lock.unlock() }
        let rate = elapsed > 0 ? Double(sent) / elapsed : 0
        if json {
            emit(.object(["event": .string("done"), "files": .integer(files), "bytes": .integer(bytes), "sent": .integer(sent),
                          "seconds": .double(elapsed), "rate": .integer(Int(rate))]))
        } else {
            clearBar()
            say("\(files) file\(files == 1 ? "" : "s"), \(ByteCount.text(bytes)) delivered (\(ByteCount.text(sent)) sent, \(ByteCount.text(Int(rate)))/s)")
        }
    }

    func clearBar() {
        if bar { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    private func emit(_ value: JSONValue) {
        print(value.serialized)
        fflush(nil)
    }
}
