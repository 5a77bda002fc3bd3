import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many SIGPIPEs this test process has received.
let sigpipeCount = Atomic<Int>(0)

/// Counts SIGPIPE instead of letting it kill the test process.
///
/// `CommandRunner` writes the activity to a handler's standard input; when the handler exits
/// without reading it, the write raises SIGPIPE, whose default action kills the process (handoffd,
/// or here the whole test run). The tests that run handlers install this first, so that a test can
/// check for the signal (`SIGPIPEWatch.count`) and report it as a failure rather than crash every
/// other test in the process.
enum SIGPIPEWatch {
    private static let installed: Bool = {
        _ = sigpipeCount.load(ordering: .relaxed)
        signal(SIGPIPE) { _ in sigpipeCount.add(1, ordering: .relaxed) }
        return true
    }()

    static func install() { _ = installed }

    static var count: Int { sigpipeCount.load(ordering: .relaxed) }
}
