#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A self-pipe that wakes a thread blocked in `poll()`: the thread polls `readDescriptor`,
/// other threads call `wake()`.
///
/// Both ends are non-blocking and close-on-exec, and are closed when the pipe is deallocated, so
/// holders must keep the pipe alive while any thread may still call `wake()` or poll it.
package final class WakePipe: Sendable {
    /// The end to poll for `POLLIN`.
    package let readDescriptor: Int32
    private let writeDescriptor: Int32

    /// Creates the pipe; nil if the system refuses (out of descriptors).
    package init?() {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { return nil }
        for descriptor in descriptors {
            let statusFlags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, statusFlags | O_NONBLOCK)
            let descriptorFlags = fcntl(descriptor, F_GETFD)
            _ = fcntl(descriptor, F_SETFD, descriptorFlags | FD_CLOEXEC)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    /// Makes `readDescriptor` readable. A full pipe (EAGAIN) already means a wake-up is pending.
    package func wake() {
        var byte: UInt8 = 1
        while write(writeDescriptor, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Consumes pending wake-ups.
    package func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while true {
            let count = withUnsafeMutableBytes(of: &buffer) { read(readDescriptor, $0.baseAddress, $0.count) }
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return
        }
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }
}
