// handoff-bench: the client of the macro benchmarks (scripts/bench). Each command prints one JSON
// line: {"samples_us": [...], "errors": N, ...}; scripts/bench computes the percentiles.
//
//   publish   --socket S [--bytes 3000] [--title T]             publish an activity, print its ID
//   continue  [--socket S] --id ID --count N [--warmup W]       continue over the control socket
//   fetch     --host H --port P --peer-id D --state DIR --id ID --count N [--concurrency C] [--warmup W] [--notify] [--reuse] [--multiplex]
//                                                               fetch from a peer port, like an agent:
//                                                               TLS as the device whose identity is in
//                                                               DIR (a paired host's stateDirectory),
//                                                               pinned to device ID D (--notify: then
//                                                               tell the source, as the agent does;
//                                                               --reuse: keep connections between
//                                                               fetches; --multiplex: all fetches
//                                                               on one multiplexed connection, as
//                                                               the agent does)
//   rtt       [--socket S] [--command status] --count N         control-socket round trips
//   spawn     --count N [--warmup W] [--via runner|child|child-no-timeout|subprocess|posix]
//                                                               run the handler `true` as the agent does
//                                                               (runner), or on a lower layer (SpawnBench.swift);
//                                                               adds the CPU per spawn (self, children)
//   ref-serve --port P [--request-bytes R --response-bytes B] [--tls --state DIR]
//                                                               bare NIO TCP server (reference); --tls:
//                                                               TLS 1.3 as the agent's listener does it,
//                                                               with the identity in DIR
//   ref-ping  --host H --port P --count N [--concurrency C] [--warmup W] [--request-bytes R --response-bytes B]
//             [--tls --state DIR --peer-id D]                   --tls: a TLS 1.3 handshake on each new
//                                                               connection, as the agent's first fetch,
//                                                               pinned to device ID D
//   exchange-sizes                                              the bytes of one fetch exchange
//   bulk-serve --port P --bytes B / bulk-read --host H --port P --bytes B [--output FILE [--direct]]
//                                                               bare TCP bulk transfer (stream reference);
//                                                               --output: each read written to FILE, one
//                                                               fsync at the end, as `nc H P > FILE; sync`
//                                                               (the file send's like-for-like reference);
//                                                               --direct: written past the page cache
//                                                               (O_DIRECT, 1 MiB aligned writes) as the
//                                                               receiving agent writes files
//   bulk-serve --tls --state DIR ... / bulk-read --tls --state DIR --peer-id D ...
//                                                               the same bytes over one TLS 1.3 connection,
//                                                               the agents' TLS (SwiftNIO, swift-nio-ssl):
//                                                               app to app with no agent in between
//   bulk-serve --tls --sha256 ... / bulk-read --tls ... --output FILE [--sha256]
//                                                               the file send's floor: over the agents' TLS,
//                                                               SHA-256 on both ends (--sha256), into FILE
//                                                               as the receiving agent writes (1 MiB batches
//                                                               past the page cache), one fsync
//   visible   --publish-socket S1 --watch-socket S2 --count N [--min-gap-ms A --max-gap-ms B --seed S] [--poll-ms 5] [--withdraw]
//   message   --publish-socket S1 --watch-socket S2 --count N [--warmup 20] [--gap-ms 10]
//                                                               one way: publish on S1 -> activityOffered on
//                                                               S2's watch (KDE Connect's ping, like for like)
//   discover  --watch-socket S --name NAME --start CMD --count N [--poll-ms 5] [--settle-ms 500]
//   discover-ref --watch-cmd CMD --name NAME --start CMD --count N [--settle-ms 500]
//   scale     --sockets S1,S2,... --expect N --t0 NS [--poll-ms 20] [--timeout S]
//
// Socket paths default to $HANDOFF_SOCKET (set by `scripts/lab exec hK`).

import HandoffAgent
import HandoffCore
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import NIOCore
import NIOPosix
import NIOTLS
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import HandoffDiscovery
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

let environmentSocket = ProcessInfo.processInfo.environment["HANDOFF_SOCKET"]
let benchHello = PeerHello(agentID: "b3ac4b3ac4b3ac4b3ac4b3ac4b3ac4b3", name: "handoff-bench")

// MARK: - publish / continue

func publish(socket: String, bytes: Int, title: String) throws -> String {
    let connection = try ControlConnection(path: socket)
    let activity = BenchmarkFixtures.activity(title: title, userInfoBytes: bytes)
    let result = try connection.call("publish", ["activity": activity.json])
    guard let id = result["id"]?.stringValue else { throw BenchError("publish returned no id") }
    return id
}

func runContinue(socket: String, id: String, count: Int, warmup: Int) throws -> Samples {
    try timedCalls(socket: socket, count: count, warmup: warmup) { connection in
        let result = try connection.call("continue", ["id": .string(id)])
        guard result["handled"]?.boolValue == true else { throw BenchError("not handled: \(result.serialized)") }
    }
}

/// Round trips of a cheap control command (the control socket and the agent actor alone).
func runRoundTrips(socket: String, command: String, count: Int, warmup: Int) throws -> Samples {
    try timedCalls(socket: socket, count: count, warmup: warmup) { connection in _ = try connection.call(command) }
}

/// Times `warmup + count` calls of `call` on one control connection, keeping the last `count`.
func timedCalls(socket: String, count: Int, warmup: Int, _ call: (ControlConnection) throws -> Void) throws -> Samples {
    var out = Samples()
    let connection = try ControlConnection(path: socket)
    let clock = ContinuousClock()
    for i in 0..<(warmup + count) {
        let start = clock.now
        do {
            try call(connection)
            if i >= warmup { out.samples.append((clock.now - start).microseconds) }
        } catch {
            if i >= warmup { out.fail("\(error)") }
        }
    }
    return out
}

// MARK: - fetch (the agent-to-agent path)

func runFetch(host: String, port: Int, peerID: DeviceID, state: String, id: UUID, count: Int, concurrency: Int, warmup: Int,
              notify: Bool = false, reuse: Bool = false, multiplex: Bool = false) async throws -> Samples {
    let identity = try DeviceIdentity.loadOrCreate(directory: state, commonName: "handoff-bench")
    let tls = PeerClientTLS(tls: try PeerTLS(identity: identity), registry: nil)
    let connector = TCPPeerConnector(group: MultiThreadedEventLoopGroup.singleton, connectTimeout: .seconds(2), tls: tls)
    let client = ContinuationClient(
        connector: connector, clock: ContinuousClock(), hello: benchHello, limits: FrameLimits(maxUserInfoBytes: 3072),
        timeouts: ContinuationTimeouts(connect: .seconds(2), fetch: .seconds(5)),
        pool: reuse || multiplex ? IdleConnectionPool(policy: .init(multiplexing: multiplex), clock: ContinuousClock(), background: .tasks) : nil)
    let endpoint = PeerEndpoint(host: host, port: port, expectedIdentity: peerID.bytes)
    // Warm-up: sequential.
    for _ in 0..<warmup {
        _ = await client.fetch(FetchRequest(activityID: id, continuationID: UUID()), from: endpoint, peerName: "source")
    }
    let clock = ContinuousClock()
    let began = clock.now
    var out = await runConcurrently(count: count, concurrency: concurrency) {
        let start = clock.now
        let request = FetchRequest(activityID: id, continuationID: UUID())
        let result = await client.fetch(request, from: endpoint, peerName: "source")
        switch result {
        case .success(let activity):
            if notify, let error = await client.notifyContinued(request, at: endpoint) {
                return .failure(BenchError("notifyContinued: \(error.message)"))
            }
            return activity.userInfo.isEmpty ? .failure(BenchError("empty userInfo")) : .success(clock.now - start)
        case .failure(let error): return .failure(BenchError("\(error.code.rawValue): \(error.message)"))
        }
    }
    out.extra["total_ms"] = .double((clock.now - began).microseconds / 1000)
    return out
}

/// Runs `count` operations with at most `concurrency` in flight; each returns its latency.
func runConcurrently(
    count: Int, concurrency: Int, _ operation: @escaping @Sendable () async -> Result<Duration, BenchError>
) async -> Samples {
    var out = Samples()
    await withTaskGroup(of: Result<Duration, BenchError>.self) { group in
        var launched = 0
        while launched < min(concurrency, count) {
            group.addTask(operation: operation)
            launched += 1
        }
        for await result in group {
            switch result {
            case .success(let latency): out.samples.append(latency.microseconds)
            case .failure(let error): out.fail(error.description)
            }
            if launched < count {
                group.addTask(operation: operation)
                launched += 1
            }
        }
    }
    return out
}

// MARK: - The bare TCP reference (SwiftNIO both sides, like the agents, no handoff logic)
//
// With TLS: the agents' own TLS 1.3 set-up (PeerTLS: mutual authentication with the devices'
// certificates, the client pinned to the server's device ID), and nothing else on the connection.

/// The bytes of one fetch exchange: what the continuing agent sends (hello + fetch) and what the
/// source answers (hello + activity + userInfo), for the fixture activity.
func exchangeSizes() -> (request: Int, response: Int) {
    let activity = BenchmarkFixtures.activity()
    let request = FetchRequest(activityID: activity.id, continuationID: UUID())
    let sent = PeerMessage.hello(benchHello).frame.bytes.count + PeerMessage.fetch(request).frame.bytes.count
    let answered = PeerMessage.hello(benchHello).frame.bytes.count + PeerMessage.activity(activity).frame.bytes.count
        + PeerMessage.userInfo(activity.userInfo).frame.bytes.count
    return (sent, answered)
}

/// Answers every `requestBytes` received with `response`.
final class ReferenceServerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let requestBytes: Int
    let response: ByteBuffer
    var pending = 0

    init(requestBytes: Int, response: ByteBuffer) {
        self.requestBytes = requestBytes
        self.response = response
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending += unwrapInboundIn(data).readableBytes
        while pending >= requestBytes {
            pending -= requestBytes
            context.writeAndFlush(wrapOutboundOut(response), promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

func referenceServe(port: Int, requestBytes: Int, responseBytes: Int, tls: PeerTLS?) async throws {
    var response = ByteBufferAllocator().buffer(capacity: responseBytes)
    response.writeBytes(BenchmarkFixtures.payload(responseBytes))
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .serverChannelOption(.backlog, value: 4096)  // as the agent's listener
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { [response] channel in
            channel.eventLoop.makeCompletedFuture {
                if let tls { try channel.pipeline.syncOperations.addHandler(tls.makeServerHandler()) }
                try channel.pipeline.syncOperations.addHandler(ReferenceServerHandler(requestBytes: requestBytes, response: response))
            }
        }
        .bind(host: "0.0.0.0", port: port).get()
    // With TLS, the device ID the client pins (`ref-ping --peer-id`).
    let device = tls.map { ", \"deviceID\": \"\($0.localDeviceID)\"" } ?? ""
    print("{\"listening\": \(channel.localAddress?.port ?? port)\(device)}")
    fflush(nil)
    try await channel.closeFuture.get()
}

/// The client side of the TLS reference: the agents' TLS and the device the server must be.
struct ReferenceTLS: Sendable {
    var tls: PeerTLS
    var expected: DeviceID
}

/// One request/response on a new connection, as an agent's first fetch to a peer does it.
func referenceExchange(host: String, port: Int, request: ByteBuffer, responseBytes: Int, tls: ReferenceTLS?) async throws {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connectTimeout(.seconds(2))
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .connect(host: host, port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                if let tls { try channel.pipeline.syncOperations.addHandler(try tls.tls.makeClientHandler(expecting: tls.expected)) }
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(request)
        var received = 0
        for try await buffer in inbound {
            received += buffer.readableBytes
            if received >= responseBytes { return }
        }
        throw BenchError("connection closed after \(received) of \(responseBytes) bytes")
    }
}

func referencePing(host: String, port: Int, count: Int, concurrency: Int, warmup: Int, requestBytes: Int, responseBytes: Int,
                   tls: ReferenceTLS?) async -> Samples {
    var request = ByteBufferAllocator().buffer(capacity: requestBytes)
    request.writeBytes(BenchmarkFixtures.payload(requestBytes))
    let message = request
    for _ in 0..<warmup { try? await referenceExchange(host: host, port: port, request: message, responseBytes: responseBytes, tls: tls) }
    let clock = ContinuousClock()
    let began = clock.now
    var out = await runConcurrently(count: count, concurrency: concurrency) {
        let start = clock.now
        do {
            try await referenceExchange(host: host, port: port, request: message, responseBytes: responseBytes, tls: tls)
            return .success(clock.now - start)
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    out.extra["total_ms"] = .double((clock.now - began).microseconds / 1000)
    return out
}

// MARK: - Bulk TCP: the reference for continuation-stream throughput (blocking sockets)

func bulkServe(port: Int, bytes: Int) throws {
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard server >= 0 else { throw BenchError("socket: errno \(errno)") }
    var one: Int32 = 1
    setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr = in_addr(s_addr: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, listen(server, 16) == 0 else { throw BenchError("bind/listen: errno \(errno)") }
    print("{\"listening\": \(port)}")
    fflush(nil)
    let chunk = [UInt8](repeating: 0xA5, count: 1 << 20)
    while true {
        let client = accept(server, nil, nil)
        if client < 0 { if errno == EINTR { continue }; throw BenchError("accept: errno \(errno)") }
        var sent = 0
        while sent < bytes {
            let n = chunk.withUnsafeBytes { write(client, $0.baseAddress!, min(chunk.count, bytes - sent)) }
            if n < 0 { if errno == EINTR { continue }; break }
            sent += n
        }
        close(client)
    }
}

// MARK: - visible: an activity change on h1 until h2 lists it

func listContains(_ connection: ControlConnection, _ id: String) throws -> Bool {
    guard let items = try connection.call("list").arrayValue else { return false }
    return items.contains { $0["id"]?.stringValue?.lowercased() == id.lowercased() }
}

/// The gap before change K (K >= 2): a 31-bit LCG from the seed, the same as dnssd-ref's.
struct GapSchedule {
    var state: UInt64
    let minMs: Int
    let maxMs: Int

    mutating func next() -> Int {
        state = (state &* 1_103_515_245 &+ 12345) & 0x7fff_ffff
        return maxMs > minMs ? minMs + Int(state % UInt64(maxMs - minMs + 1)) : minMs
    }
}

/// Publishes a new activity on S1 at the times of the gap schedule (the same schedule the
/// dnssd-ref reference updates its TXT record on) and polls S2's `list` every `pollMs` until the
/// new ID is listed. Each sample runs from just before the publish request is sent. With
/// `withdraw`, each change once listed is resigned at once and S2's `list` polled until it is
/// gone (`withdraw_samples_us`, from just before the resign request), within the same gap.
func runVisible(publishSocket: String, watchSocket: String, count: Int, schedule: GapSchedule, pollMs: Int,
                withdraw: Bool = false) throws -> Samples {
    var out = Samples()
    var schedule = schedule
    let publisher = try ControlConnection(path: publishSocket)
    let watcher = try ControlConnection(path: watchSocket)
    let clock = ContinuousClock()
    var publishedAt: [JSONValue] = []
    var withdrawSamples: [JSONValue] = []
    var withdrawErrors = 0
    sleepMilliseconds(2000)  // as the reference: a settle before the first change
    var due = clock.now
    for i in 0..<count {
        if i > 0 {
            due = due.advanced(by: .milliseconds(schedule.next()))
            let wait = (due - clock.now).microseconds
            if wait > 0 { sleepMilliseconds(Int(wait / 1000)) }
        }
        let activity = BenchmarkFixtures.activity(title: "Change \(i)")
        publishedAt.append(.integer(realtimeNanoseconds()))
        let start = clock.now
        if i == 0 { due = start }
        let id: String
        do {
            guard let published = try publisher.call("publish", ["activity": activity.json])["id"]?.stringValue else {
                throw BenchError("publish returned no id")
            }
            id = published
        } catch {
            out.fail("publish: \(error)")
            continue
        }
        // Until seen, or until the next change is due (at least schedule.minMs).
        var seen = false
        while (clock.now - start).microseconds < Double(schedule.minMs) * 1000 {
            if (try? listContains(watcher, id)) == true { seen = true; break }
            sleepMilliseconds(pollMs)
        }
        if seen { out.samples.append((clock.now - start).microseconds) } else { out.fail("change \(i) not visible within \(schedule.minMs) ms") }
        guard withdraw, seen else { continue }
        let resignStart = clock.now
        var gone = false
        if (try? publisher.call("resign", ["id": .string(id)])) != nil {
            while (clock.now - resignStart).microseconds < Double(schedule.minMs) * 1000 {
                if (try? listContains(watcher, id)) == false { gone = true; break }
                sleepMilliseconds(pollMs)
            }
        }
        if gone { withdrawSamples.append(.double((clock.now - resignStart).microseconds)) } else { withdrawErrors += 1 }
    }
    out.extra["published_ns"] = .array(publishedAt)
    if withdraw {
        out.extra["withdraw_samples_us"] = .array(withdrawSamples)
        out.extra["withdraw_errors"] = .integer(Int64(withdrawErrors))
    }
    return out
}

// MARK: - discover: start an agent, until a peer lists it

func peerNames(_ socket: String) -> Set<String>? {
    guard let connection = connectControl(socket), let peers = try? connection.call("peers").arrayValue else { return nil }
    return Set(peers.compactMap { $0["name"]?.stringValue })
}

/// The names of the peers whose activities the agent at `socket` offers now (`list`).
func offeringPeerNames(_ socket: String) -> Set<String>? {
    guard let connection = connectControl(socket), let items = try? connection.call("list").arrayValue else { return nil }
    return Set(items.compactMap { $0["peer"]?.stringValue })
}

/// Starts `name`'s agent `count` times: each time, how long until the agent at `watchSocket`
/// lists it among its peers (the samples), and with `withActivity` until it lists the activity
/// that agent offers (it kept it across the restart: `activity_us`); then how long its goodbye took.
func runDiscover(watchSocket: String, name: String, start: String, count: Int, pollMs: Int, holdMs: Int, settleMs: Int, timeoutMs: Int,
                 withActivity: Bool = false) throws -> Samples {
    var out = Samples()
    var goodbye: [Double] = []
    var activity: [Double] = []
    let clock = ContinuousClock()
    for i in 0..<count {
        // Wait until the peer is not listed (a previous run's goodbye).
        let idle = clock.now
        while peerNames(watchSocket)?.contains(name) != false, (clock.now - idle).microseconds < Double(timeoutMs) * 1000 {
            sleepMilliseconds(pollMs)
        }
        let began = clock.now
        let pid = try spawnShell(start)
        var seen = false
        while (clock.now - began).microseconds < Double(timeoutMs) * 1000 {
            if peerNames(watchSocket)?.contains(name) == true { seen = true; break }
            sleepMilliseconds(pollMs)
        }
        if seen { out.samples.append((clock.now - began).microseconds) } else { out.fail("start \(i): \(name) not listed within \(timeoutMs) ms") }
        if seen, withActivity {
            var offered = false
            while (clock.now - began).microseconds < Double(timeoutMs) * 1000 {
                if offeringPeerNames(watchSocket)?.contains(name) == true { offered = true; break }
                sleepMilliseconds(pollMs)
            }
            if offered { activity.append((clock.now - began).microseconds) } else { out.fail("start \(i): \(name)'s activity not listed within \(timeoutMs) ms") }
        }
        sleepMilliseconds(holdMs)
        let stopAt = clock.now
        stopProcess(pid)
        while peerNames(watchSocket)?.contains(name) == true, (clock.now - stopAt).microseconds < Double(timeoutMs) * 1000 {
            sleepMilliseconds(pollMs)
        }
        goodbye.append((clock.now - stopAt).microseconds)
        sleepMilliseconds(settleMs)
    }
    out.extra["goodbye_us"] = .array(goodbye.map { .double($0.rounded()) })
    if withActivity { out.extra["activity_us"] = .array(activity.map { .double($0.rounded()) }) }
    return out
}

/// Lines of a child process's standard output, read on a thread.
final class LineReader: Sendable {
    final class Box: Sendable { let lines = Mutex<[String]>([]) }
    let box = Box()
    let pid: pid_t

    init(command: String) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe") }
        // Neither end leaks into the child; its stdout is a duplicate of the write end.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let spawned = Result { try spawnShell(command, stdout: .descriptor(fds[1])) }
        close(fds[1])
        self.pid = try spawned.get()
        let readFD = fds[0]
        let box = self.box
        let started = DetachedThread.start(name: "bench-lines") {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress!, 4096) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                buffer += chunk[0..<n]
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    box.lines.withLock { $0.append(line) }
                }
            }
            close(readFD)
        }
        guard started else { throw BenchError("cannot start a thread to read the command's output") }
    }

    /// Waits for a line starting with `prefix` after line index `from`; returns it and its index.
    func wait(prefix: String, from: Int, timeoutMs: Int) -> (String, Int)? {
        var waited = 0
        while waited <= timeoutMs {
            let found = box.lines.withLock { lines -> (String, Int)? in
                for i in from..<lines.count where lines[i].hasPrefix(prefix) { return (lines[i], i) }
                return nil
            }
            if let found { return found }
            sleepMilliseconds(1)
            waited += 1
        }
        return nil
    }

    var count: Int { box.lines.withLock { $0.count } }
}

/// The same loop with bare dns_sd: `start` registers NAME (dnssd-ref register), the watcher
/// (dnssd-ref watch, already running in the other host) reports "seen NAME <ns>".
func runDiscoverReference(watchCommand: String, name: String, start: String, count: Int, holdMs: Int, settleMs: Int, timeoutMs: Int) throws -> Samples {
    var out = Samples()
    var goodbye: [Double] = []
    let watcher = try LineReader(command: watchCommand)
    defer { stopProcess(watcher.pid) }
    guard watcher.wait(prefix: "watching", from: 0, timeoutMs: 10_000) != nil else { throw BenchError("the reference watcher did not start") }
    sleepMilliseconds(500)
    for i in 0..<count {
        let from = watcher.count
        let began = realtimeNanoseconds()
        let pid = try spawnShell(start)
        if let (line, index) = watcher.wait(prefix: "seen \(name) ", from: from, timeoutMs: timeoutMs),
            let ns = Int64(line.split(separator: " ").last ?? "")
        {
            out.samples.append(Double(ns - began) / 1000)
            sleepMilliseconds(holdMs)
            let stopAt = realtimeNanoseconds()
            stopProcess(pid)
            if let (gone, _) = watcher.wait(prefix: "gone \(name) ", from: index, timeoutMs: timeoutMs),
                let goneNs = Int64(gone.split(separator: " ").last ?? "")
            {
                goodbye.append(Double(goneNs - stopAt) / 1000)
            }
        } else {
            out.fail("start \(i): \(name) not seen within \(timeoutMs) ms")
            stopProcess(pid)
        }
        sleepMilliseconds(settleMs)
    }
    out.extra["goodbye_us"] = .array(goodbye.map { .double($0.rounded()) })
    return out
}

// MARK: - scale: until every agent lists every other

func runScale(sockets: [String], expect: Int, t0: Int64, pollMs: Int, timeoutMs: Int) -> Samples {
    var out = Samples()
    var doneAt: [Int64?] = Array(repeating: nil, count: sockets.count)
    var connections: [ControlConnection?] = Array(repeating: nil, count: sockets.count)
    while doneAt.contains(where: { $0 == nil }), realtimeNanoseconds() - t0 < Int64(timeoutMs) * 1_000_000 {
        for (i, socket) in sockets.enumerated() where doneAt[i] == nil {
            if connections[i] == nil { connections[i] = connectControl(socket) }
            guard let connection = connections[i] else { continue }
            do {
                let names = Set((try connection.call("peers").arrayValue ?? []).compactMap { $0["name"]?.stringValue })
                if names.count >= expect { doneAt[i] = realtimeNanoseconds() }
            } catch {
                connections[i] = nil
            }
        }
        sleepMilliseconds(pollMs)
    }
    for (i, done) in doneAt.enumerated() {
        if let done { out.samples.append(Double(done - t0) / 1000) } else { out.fail("\(sockets[i]): fewer than \(expect) peers within \(timeoutMs) ms") }
    }
    return out
}

// MARK: - Bulk TLS: the same bytes over one connection in the agents' TLS (SwiftNIO both sides)

/// Writes `bytes` to each connection once TLS is up, 1 MiB at a time while the channel is
/// writable, then closes it.
final class BulkTLSWriter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let bytes: Int
    let chunk: ByteBuffer
    var sent = 0
    var started = false
    /// With `--sha256`: the SHA-256 of every byte sent, computed as it is sent, as the sending
    /// CLI hashes a file as it reads it.
    var digest: ContentDigest?

    init(bytes: Int, hashing: Bool = false) {
        self.bytes = bytes
        self.digest = hashing ? ContentDigest() : nil
        var chunk = ByteBufferAllocator().buffer(capacity: 1 << 20)
        chunk.writeRepeatingByte(0xA5, count: 1 << 20)
        self.chunk = chunk
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            started = true
            writeMore(context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if started { writeMore(context) }
        context.fireChannelWritabilityChanged()
    }

    private func writeMore(_ context: ChannelHandlerContext) {
        // Each chunk is flushed, so that TLS passes it down and writability tells when to wait.
        while sent < bytes, context.channel.isWritable {
            let n = min(chunk.readableBytes, bytes - sent)
            sent += n
            let slice = chunk.getSlice(at: chunk.readerIndex, length: n)!
            slice.withUnsafeReadableBytes { digest?.update($0) }
            guard sent >= bytes else {
                context.writeAndFlush(wrapOutboundOut(slice), promise: nil)
                continue
            }
            // The last chunk: close once it is out (closing earlier would drop what is pending).
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(wrapOutboundOut(slice), promise: written)
            let sentDigest = digest
            written.futureResult.whenComplete { _ in
                // The digest, and the CPU the server spent (hashing and encrypting what it sent).
                if let sentDigest {
                    var done = Samples()
                    done.extra["sha256"] = .string(sentDigest.hex())
                    done.printJSON()
                }
                context.close(promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}

func bulkServeTLS(port: Int, bytes: Int, tls: PeerTLS, hashing: Bool = false) async throws {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(tls.makeServerHandler())
                try channel.pipeline.syncOperations.addHandler(BulkTLSWriter(bytes: bytes, hashing: hashing))
            }
        }
        .bind(host: "0.0.0.0", port: port).get()
    print("{\"listening\": \(channel.localAddress?.port ?? port), \"deviceID\": \"\(tls.localDeviceID)\"}")
    fflush(nil)
    try await channel.closeFuture.get()
}

/// One TLS 1.3 connection in the agents' TLS to a bulk server, for reading (reads of up to 1 MiB).
func connectBulkTLS(host: String, port: Int, tls: ReferenceTLS) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
    try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connectTimeout(.seconds(2))
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 1 << 20))
        .connect(host: host, port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(try tls.tls.makeClientHandler(expecting: tls.expected))
                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
}

func bulkReadTLS(host: String, port: Int, bytes: Int, tls: ReferenceTLS) async throws -> Samples {
    let clock = ContinuousClock()
    let start = clock.now
    let channel = try await connectBulkTLS(host: host, port: port, tls: tls)
    var received = 0
    do {
        try await channel.executeThenClose { inbound, _ in
            for try await buffer in inbound {
                received += buffer.readableBytes
                if received >= bytes { return }
            }
        }
    } catch {
        // The server closes after the last byte; an unclean TLS close then is not a failure.
        if received < bytes { throw error }
    }
    return bulkResult(received: received, of: bytes, in: clock.now - start)
}

// MARK: - main

func run() async throws {
    let argv = CommandLine.arguments
    guard argv.count >= 2 else { throw BenchError("usage: handoff-bench COMMAND [OPTIONS] (see the source's header)") }
    let args = try Arguments(argv.dropFirst(2))
    func socket(_ key: String = "socket") throws -> String { try args.string(key, default: environmentSocket) }
    func peerID() throws -> DeviceID {
        do { return try DeviceID(parsing: try args.string("peer-id")) } catch { throw BenchError("--peer-id: \(error)") }
    }
    /// --tls: the agents' TLS with the identity in --state (created there if missing).
    func peerTLS() throws -> PeerTLS? {
        guard args.flag("tls") else { return nil }
        return try PeerTLS(identity: DeviceIdentity.loadOrCreate(directory: try args.string("state"), commonName: "handoff-bench"))
    }
    switch argv[1] {
    case "publish":
        print(try publish(socket: socket(), bytes: args.int("bytes", default: 3000), title: args.string("title", default: "Benchmark activity")))
    case "continue":
        try runContinue(socket: socket(), id: args.string("id"), count: args.int("count"), warmup: args.int("warmup", default: 20)).printJSON()
    case "rtt":
        try runRoundTrips(socket: socket(), command: args.string("command", default: "status"), count: args.int("count"),
                          warmup: args.int("warmup", default: 20)).printJSON()
    case "fetch":
        guard let id = UUID(uuidString: try args.string("id")) else { throw BenchError("--id must be a UUID") }
        try await runFetch(
            host: try args.string("host"), port: try args.int("port"), peerID: try peerID(), state: try args.string("state"),
            id: id, count: try args.int("count"),
            concurrency: try args.int("concurrency", default: 1), warmup: try args.int("warmup", default: 20),
            notify: args.flag("notify"), reuse: args.flag("reuse"), multiplex: args.flag("multiplex")
        ).printJSON()
    case "spawn":
        guard let via = SpawnPath(rawValue: try args.string("via", default: SpawnPath.runner.rawValue)) else {
            throw BenchError("--via must be one of \(SpawnPath.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        await runSpawn(via: via, count: try args.int("count"), warmup: try args.int("warmup", default: 20)).printJSON()
    case "exchange-sizes":
        let sizes = exchangeSizes()
        print("{\"request_bytes\": \(sizes.request), \"response_bytes\": \(sizes.response)}")
    case "ref-serve":
        let sizes = exchangeSizes()
        try await referenceServe(
            port: try args.int("port"), requestBytes: try args.int("request-bytes", default: sizes.request),
            responseBytes: try args.int("response-bytes", default: sizes.response), tls: try peerTLS())
    case "ref-ping":
        let sizes = exchangeSizes()
        await referencePing(
            host: try args.string("host"), port: try args.int("port"), count: try args.int("count"),
            concurrency: try args.int("concurrency", default: 1), warmup: try args.int("warmup", default: 20),
            requestBytes: try args.int("request-bytes", default: sizes.request),
            responseBytes: try args.int("response-bytes", default: sizes.response),
            tls: try peerTLS().map { ReferenceTLS(tls: $0, expected: try peerID()) }
        ).printJSON()
    case "visible":
        let schedule = GapSchedule(
            state: UInt64(try args.int("seed", default: 1)), minMs: try args.int("min-gap-ms", default: 1200),
            maxMs: try args.int("max-gap-ms", default: 2800))
        try runVisible(
            publishSocket: args.string("publish-socket"), watchSocket: args.string("watch-socket"), count: args.int("count"),
            schedule: schedule, pollMs: args.int("poll-ms", default: 5), withdraw: args.flag("withdraw")
        ).printJSON()
    case "discover":
        try runDiscover(
            watchSocket: args.string("watch-socket"), name: args.string("name"), start: args.string("start"), count: args.int("count"),
            pollMs: args.int("poll-ms", default: 5), holdMs: args.int("hold-ms", default: 500), settleMs: args.int("settle-ms", default: 500),
            timeoutMs: args.int("timeout-ms", default: 10_000), withActivity: args.flag("with-activity")
        ).printJSON()
    case "discover-ref":
        try runDiscoverReference(
            watchCommand: args.string("watch-cmd"), name: args.string("name"), start: args.string("start"), count: args.int("count"),
            holdMs: args.int("hold-ms", default: 500), settleMs: args.int("settle-ms", default: 500),
            timeoutMs: args.int("timeout-ms", default: 10_000)
        ).printJSON()
    case "scale":
        guard let t0 = Int64(try args.string("t0")) else { throw BenchError("--t0 must be CLOCK_REALTIME ns") }
        runScale(
            sockets: try args.string("sockets").split(separator: ",").map(String.init), expect: try args.int("expect"), t0: t0,
            pollMs: try args.int("poll-ms", default: 20), timeoutMs: try args.int("timeout-ms", default: 30_000)
        ).printJSON()
    case "message":
        try runMessage(publishSocket: try args.string("publish-socket"), watchSocket: try args.string("watch-socket"),
                       count: try args.int("count"), warmup: try args.int("warmup", default: 20), gapMs: try args.int("gap-ms", default: 10)).printJSON()
    case "bulk-serve":
        if let tls = try peerTLS() {
            try await bulkServeTLS(port: try args.int("port"), bytes: try args.int("bytes"), tls: tls, hashing: args.flag("sha256"))
        } else {
            try bulkServe(port: try args.int("port"), bytes: try args.int("bytes"))
        }
    case "bulk-read":
        if let tls = try peerTLS() {
            let output = try args.string("output", default: "")
            let tls = ReferenceTLS(tls: tls, expected: try peerID())
            if output.isEmpty {
                try await bulkReadTLS(host: try args.string("host"), port: try args.int("port"), bytes: try args.int("bytes"), tls: tls).printJSON()
            } else {
                try await securedFileRead(host: try args.string("host"), port: try args.int("port"), bytes: try args.int("bytes"), tls: tls,
                                          output: output, hashing: args.flag("sha256")).printJSON()
            }
        } else {
            let output = try args.string("output", default: "")
            try bulkRead(host: try args.string("host"), port: try args.int("port"), bytes: try args.int("bytes"),
                         output: output.isEmpty ? nil : output, direct: args.flag("direct")).printJSON()
        }
    case "now":
        print(realtimeNanoseconds())
    default:
        throw BenchError("unknown command '\(argv[1])'")
    }
}

do {
    try await run()
} catch {
    let line = Array("handoff-bench: \(error)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}
