#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts detached POSIX threads for work that blocks in system calls (`poll()`) and so must not
/// run on the Swift concurrency pool.
package enum DetachedThread {
    /// Runs `body` on a new detached thread named `name` (on Linux its first 15 bytes).
    /// Returns false if the thread could not be created; `body` is then never run.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let payload = Unmanaged.passRetained(ThreadPayload(name: name, body: body))
        #if canImport(Darwin)
        var thread: pthread_t? = nil
        let result = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadPayload>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, payload.toOpaque())
        if result == 0, let thread { pthread_detach(thread) }
        #else
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<ThreadPayload>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, payload.toOpaque())
        if result == 0 { pthread_detach(thread) }
        #endif
        if result != 0 {
            payload.release()
            return false
        }
        return true
    }
}

/// What a `DetachedThread` runs.
private final class ThreadPayload: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    func run() {
        #if canImport(Darwin)
        _ = pthread_setname_np(name)
        #elseif os(Linux)
        // Glibc hides pthread_setname_np behind _GNU_SOURCE; writing the calling thread's comm
        // file does the same (threads it starts inherit the name).
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        if descriptor >= 0 {
            let bytes = Array(name.utf8.prefix(15))
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        #endif
        body()
    }
}
