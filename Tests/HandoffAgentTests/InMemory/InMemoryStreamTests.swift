import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import Testing

@testable import HandoffAgent

/// The source app's side of the stream tests: sends back every chunk it reads, as it reads it,
/// then ends its output when its input ends.
final class EchoingSource: UserActivityDelegate {
    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        do {
            for try await chunk in inputStream { try await outputStream.write(chunk) }
        } catch {}
        await outputStream.close()
    }
}

/// The source app's side: writes `bytes` (a pattern), ends its output, and reads until its input ends.
final class WritingSource: UserActivityDelegate {
    let bytes: [UInt8]
    init(bytes: [UInt8]) { self.bytes = bytes }

    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        try? await outputStream.write(bytes)
        await outputStream.close()
        do { for try await _ in inputStream {} } catch {}
    }
}

/// Whole agents in one process, each with the notes app: continuation streams between the two
/// apps, relayed by both agents joining their connections' splices as between hosts. The stream
/// connections are NIO channels over pipes (``PipeChannels``), set up as on TCP: no sockets.
@Suite("Whole agents in memory: continuation streams", .timeLimit(.minutes(1)))
struct InMemoryStreamTests {
    typealias Hosts = InMemoryContinueTests.Hosts

    /// Deterministic bytes.
    static func pattern(_ count: Int) -> [UInt8] {
        var random = SplitMix64(seed: UInt64(count))
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    }

    /// The editor on alpha makes a note current whose streams `source` answers; bravo continues
    /// it to its viewer, which opens the note's continuation streams.
    static func continueAndOpenStreams(_ hosts: Hosts, _ editorApp: HandoffApplication, source: any UserActivityDelegate) async throws
        -> ContinuationStreams
    {
        let note = UserActivity(activityType: NotesApp.type, application: editorApp)
        note.title = "Shopping list"
        note.supportsContinuationStreams = true
        note.delegate = source
        try await note.becomeCurrent()
        await hosts.bravo.discover(hosts.alpha)
        #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
        let continued = try #require(hosts.viewer.continued)
        return try await continued.getContinuationStreams()
    }

    /// Everything the input carries, until it ends.
    static func readAll(_ input: ContinuationInputStream) async throws -> [UInt8] {
        var all: [UInt8] = []
        for try await chunk in input { all += chunk }
        return all
    }

    /// Whether both agents have closed every stream pair they relayed.
    static func pairsClosed(_ hosts: Hosts) async -> Bool {
        await eventually(maximumYields: 2_000_000) {
            hosts.alpha.agent.openStreamPairs == 0 && hosts.bravo.agent.openStreamPairs == 0
        }
    }

    @Test("1 MiB from bravo's viewer to alpha's editor and back, bit-exact both ways; both agents then close the pair")
    func bothDirections() async throws {
        let hosts = Hosts()
        let source = EchoingSource()
        try await hosts.run { editorApp in
            let streams = try await Self.continueAndOpenStreams(hosts, editorApp, source: source)
            let data = Self.pattern((1 << 20) + 12_345)
            // Read while writing: the echo comes back at the pace the viewer reads it.
            try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                group.addTask { try await Self.readAll(streams.input) }
                group.addTask {
                    try await streams.output.write(data)
                    await streams.output.close()
                    return nil
                }
                var echoed: [UInt8]?
                while let next = try await group.next() { if let next { echoed = next } }
                #expect(echoed?.count == data.count)
                #expect(echoed == data)
            }
            #expect(await Self.pairsClosed(hosts), "stream pairs still open: \(hosts.alpha.agent.openStreamPairs), \(hosts.bravo.agent.openStreamPairs)")
        }
    }

    @Test("stallStreamAfterBytes on alpha: bravo's viewer gets at most the budget, then 4610 at bravo's limits.streamIdleTimeout")
    func stalledStream() async throws {
        let idle = Duration.seconds(1)  // real time: the stream request itself must come in under it on a loaded machine
        let hosts = Hosts(bravo: { $0.limits.streamIdleTimeout = idle })
        let source = WritingSource(bytes: Self.pattern(1 << 20))
        try await hosts.run { editorApp in
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["stallStreamAfterBytes": .integer(65_536)]), clear: nil).get()
            let streams = try await Self.continueAndOpenStreams(hosts, editorApp, source: source)
            var received = 0
            do {
                for try await chunk in streams.input { received += chunk.count }
                Issue.record("the stalled stream ended cleanly after \(received) bytes")
            } catch let error as HandoffError {
                #expect(error.code.rawValue == 4610, "\(error)")
                #expect(error.message == "alpha sent nothing on the continuation streams for \(idle) (limits.streamIdleTimeout)")
            }
            #expect(received <= 65_536)
            await streams.output.close()
            #expect(await Self.pairsClosed(hosts))
        }
    }

    @Test("alpha's host goes away mid-stream: bravo's viewer, having read the first bytes, learns the peer went away; bravo closes the pair")
    func peerLeavesMidStream() async throws {
        let hosts = Hosts()
        let source = HoldingSource()
        try await hosts.run { editorApp in
            let streams = try await Self.continueAndOpenStreams(hosts, editorApp, source: source)
            var input = streams.input.makeAsyncIterator()
            #expect(try await input.next() == Array("first bytes".utf8))
            hosts.alpha.transport.network.takeDown(host: hosts.alpha.listener.host, port: hosts.alpha.listener.port)
            do {
                let more = try await input.next()
                Issue.record("the stream went on after its peer left: \(String(describing: more))")
            } catch let error as HandoffError {
                #expect(error.message.contains("went away"), "\(error)")
            }
            #expect(await eventually(maximumYields: 2_000_000) { hosts.bravo.agent.openStreamPairs == 0 })
            await streams.output.close()
        }
    }
}

/// The source app's side: writes its first bytes, then holds its output open until its input ends.
final class HoldingSource: UserActivityDelegate {
    func userActivity(_ activity: UserActivity, didReceive inputStream: ContinuationInputStream, outputStream: ContinuationOutputStream) async {
        try? await outputStream.write(Array("first bytes".utf8))
        do { for try await _ in inputStream {} } catch {}
        await outputStream.close()
    }
}
