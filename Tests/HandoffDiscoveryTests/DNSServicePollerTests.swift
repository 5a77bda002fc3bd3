// The poll loop of DNSServicePoller, with pipes standing in for the sockets of dns_sd refs (the
// refs themselves need an mDNS daemon; they are exercised on simulated hosts by the integration
// tests).
import Foundation
import Logging
import Synchronization
import Testing

@testable import HandoffDiscovery

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pipe polled like a ref's socket: `makeReadable()` is a reply arriving, `end()` a cancel.
/// Records every call the poller makes, and the thread it made it on.
private final class PipeSource: PolledSource {
    struct Record {
        var opened = 0
        var ready = 0
        var signalled = 0
        var closed: [PolledSourceEnd] = []
        var threads: Set<UInt> = []
        var ended = false
    }

    let pipe = WakePipe()!
    let opens: Bool
    /// Runs inside `descriptorReady`, like a dns_sd callback.
    let onReady: (@Sendable (PipeSource) -> Void)?
    let record = Mutex(Record())
    private let poller: DNSServicePoller

    init(poller: DNSServicePoller, opens: Bool = true, onReady: (@Sendable (PipeSource) -> Void)? = nil) {
        self.poller = poller
        self.opens = opens
        self.onReady = onReady
    }

    func makeReadable() { pipe.wake() }

    /// Asks the poller to let go of the source, as `DNSServiceOperation.cancel()` does.
    func end() {
        record.withLock { $0.ended = true }
        poller.signal(self)
    }

    var snapshot: Record { record.withLock { $0 } }

    func open() -> Int32? {
        note { $0.opened += 1 }
        return opens ? pipe.readDescriptor : nil
    }

    func descriptorReady(events: Int16) -> Bool {
        pipe.drain()
        note { $0.ready += 1 }
        onReady?(self)
        return !record.withLock { $0.ended }
    }

    func signalled() -> Bool {
        note { $0.signalled += 1 }
        return !record.withLock { $0.ended }
    }

    func close(_ reason: PolledSourceEnd) {
        note { $0.closed.append(reason) }
    }

    private func note(_ change: (inout Record) -> Void) {
        let thread = currentThread()
        record.withLock {
            change(&$0)
            $0.threads.insert(thread)
        }
    }
}

/// Polls `condition` every 5 ms until it holds or `seconds` pass.
private func eventually(within seconds: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// The number of this process's threads named `name` (Linux; nil elsewhere).
private func threads(named name: String) -> Int? {
    #if os(Linux)
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
    return tasks.filter { task in
        let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
        return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
    }.count
    #else
    return nil
    #endif
}

/// What a callback was called with, in order.
private final class Calls: Sendable {
    private let calls = Mutex<[String]>([])
    func note(_ call: String) { calls.withLock { $0.append(call) } }
    var list: [String] { calls.withLock { $0 } }
}

private func currentThread() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

@Suite("DNSServicePoller")
struct DNSServicePollerTests {
    @Test("sources added while the thread polls are polled too, all on the one poller thread")
    func addWhilePolling() async {
        let poller = DNSServicePoller(threadName: "tpoll-add")
        let first = PipeSource(poller: poller)
        #expect(poller.add(first))
        first.makeReadable()
        #expect(await eventually { first.snapshot.ready >= 1 })

        let second = PipeSource(poller: poller)
        #expect(poller.add(second))  // while the thread is blocked in poll()
        second.makeReadable()
        #expect(await eventually { second.snapshot.ready >= 1 })
        first.makeReadable()
        #expect(await eventually { first.snapshot.ready >= 2 })

        let calls = first.snapshot.threads.union(second.snapshot.threads)
        #expect(calls.count == 1)
        #expect(!calls.contains(currentThread()))
        #expect(first.snapshot.opened == 1 && second.snapshot.opened == 1)
        // Each source is signalled once after opening, to run work queued before.
        #expect(first.snapshot.signalled == 1 && second.snapshot.signalled == 1)
        await poller.stop()
    }

    @Test("a source that ended is closed once and gets no more callbacks, while the others still do")
    func endedSourceGetsNoMoreCallbacks() async {
        let poller = DNSServicePoller(threadName: "tpoll-end")
        let ending = PipeSource(poller: poller)
        let other = PipeSource(poller: poller)
        #expect(poller.add(ending) && poller.add(other))
        ending.makeReadable()
        #expect(await eventually { ending.snapshot.ready == 1 })

        ending.end()
        #expect(await eventually { ending.snapshot.closed == [.ended] })
        let readyWhenClosed = ending.snapshot.ready
        ending.makeReadable()
        other.makeReadable()
        #expect(await eventually { other.snapshot.ready >= 1 })  // the poller went round after the write
        other.makeReadable()
        #expect(await eventually { other.snapshot.ready >= 2 })
        #expect(ending.snapshot.ready == readyWhenClosed)
        #expect(ending.snapshot.closed == [.ended])
        await poller.stop()
        #expect(ending.snapshot.closed == [.ended])
        #expect(other.snapshot.closed == [.pollerStopped])
    }

    @Test("a callback can end its own source and another one; neither is called again")
    func callbackEndsSources() async {
        let poller = DNSServicePoller(threadName: "tpoll-cb")
        let victim = PipeSource(poller: poller)
        let trigger = PipeSource(poller: poller) { trigger in
            victim.end()
            trigger.end()
        }
        #expect(poller.add(victim) && poller.add(trigger))
        trigger.makeReadable()
        #expect(await eventually { trigger.snapshot.closed == [.ended] && victim.snapshot.closed == [.ended] })
        victim.makeReadable()
        trigger.makeReadable()
        let witness = PipeSource(poller: poller)
        #expect(poller.add(witness))
        witness.makeReadable()
        #expect(await eventually { witness.snapshot.ready >= 1 })
        #expect(victim.snapshot.ready == 0)
        #expect(trigger.snapshot.ready == 1)
        await poller.stop()
    }

    @Test("a source that cannot open is closed at once and never polled")
    func failedOpen() async {
        let poller = DNSServicePoller(threadName: "tpoll-open")
        let failing = PipeSource(poller: poller, opens: false)
        #expect(poller.add(failing))
        #expect(await eventually { failing.snapshot.closed == [.ended] })
        failing.makeReadable()
        failing.end()
        let witness = PipeSource(poller: poller)
        #expect(poller.add(witness))
        witness.makeReadable()
        #expect(await eventually { witness.snapshot.ready >= 1 })
        #expect(failing.snapshot.ready == 0 && failing.snapshot.signalled == 0)
        await poller.stop()
    }

    @Test("stop() closes every source, also those just added, ends the thread and refuses later sources")
    func stopClosesEverything() async {
        let name = "tpoll-stop"
        let poller = DNSServicePoller(threadName: name)
        let sources = (0..<50).map { _ in PipeSource(poller: poller) }
        for source in sources { #expect(poller.add(source)) }
        sources[7].makeReadable()
        #expect(await eventually { sources[7].snapshot.ready == 1 })
        // One thread polls all fifty.
        if let count = threads(named: name) { #expect(count == 1) }

        let late = PipeSource(poller: poller)
        #expect(poller.add(late))
        await poller.stop()
        for source in sources + [late] {
            #expect(source.snapshot.closed == [.pollerStopped])
        }
        // The thread exits right after closing the sources.
        #expect(await eventually { (threads(named: name) ?? 0) == 0 })

        let refused = PipeSource(poller: poller)
        #expect(!poller.add(refused))
        #expect(refused.snapshot.opened == 0 && refused.snapshot.closed.isEmpty)
        await poller.stop()  // idempotent
    }

    @Test("a poller never used starts no thread, and stopping it returns at once")
    func unusedPoller() async {
        let poller = DNSServicePoller(threadName: "tpoll-idle")
        await poller.stop()
        let refused = PipeSource(poller: poller)
        #expect(!poller.add(refused))
        if let count = threads(named: "tpoll-idle") { #expect(count == 0) }
    }

    @Test("an operation the poller refuses finishes with an error at once, without creating its ref")
    func refusedOperation() async {
        let poller = DNSServicePoller(threadName: "tpoll-op")
        await poller.stop()
        let calls = Calls()
        let operation = DNSServiceOperation(
            name: "DNSServiceBrowse", poller: poller, replyHandler: .browse { _ in },
            logger: Logger(label: "test"), onFinish: { error in calls.note("finished \(error?.code ?? 0)") }
        ) { _, _ in
            calls.note("created")
            return DNSSDConstants.errNoError
        }
        let error = await operation.run()
        #expect(error?.code == DNSSDConstants.errUnknown)
        #expect(calls.list == ["finished \(DNSSDConstants.errUnknown)"])
    }
}
