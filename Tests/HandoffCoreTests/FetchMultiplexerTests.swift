import HandoffCore
import HandoffTestSupport
import Synchronization
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `FetchMultiplexer`, the pure state machine of many fetches on one connection, and
/// `RequestSlots`, the source's cap on the requests it serves at once: request IDs, replies out
/// of order, a connection that drops with requests in flight, limits per request, the cap.
@Suite("FetchMultiplexer and RequestSlots: many fetches on one connection")
struct FetchMultiplexerTests {
    static let source = SourceSessionStateMachine(hello: PeerHello(agentID: "s", name: "Desktop", multiplexing: true))

    static func request(_ activityID: UUID) -> FetchRequest { FetchRequest(activityID: activityID, continuationID: UUID()) }

    /// The source's answer to `request` as reply frames tagged `id`.
    static func replies(_ activity: Activity?, _ request: FetchRequest, id: UInt32) -> [Frame] {
        source.answer(activity, request: request, now: Fixtures.now).map { TaggedFrame(id: id, frame: $0).wrapped(as: .reply) }
    }

    static func begin(_ mux: inout FetchMultiplexer, _ request: FetchRequest) throws -> UInt32 {
        let started = mux.begin(request, hello: Fixtures.hello(), peerName: "Desktop")
        let (id, frame) = try #require(started)
        #expect(frame.kind == .request)
        let tagged = try TaggedFrame(unwrapping: frame)
        #expect(tagged.id == id)
        #expect(try PeerMessage(frame: tagged.frame) == .fetch(request))
        return id
    }

    @Test("a tagged frame wraps and unwraps whole; a short or inconsistent one is malformed")
    func taggedFrame() throws {
        let inner = PeerMessage.fetch(Fixtures.request).frame
        let wrapped = TaggedFrame(id: 0xDEAD_BEEF, frame: inner).wrapped(as: .request)
        #expect(wrapped.payload.count == inner.payload.count + TaggedFrame.overhead)
        #expect(try TaggedFrame(unwrapping: wrapped) == TaggedFrame(id: 0xDEAD_BEEF, frame: inner))
        #expect(throws: FrameError.self) { try TaggedFrame(unwrapping: Frame(kind: .reply, payload: [0, 0, 0, 1, 2])) }
        var cut = wrapped
        cut.payload.removeLast()
        #expect(throws: FrameError.self) { try TaggedFrame(unwrapping: cut) }
    }

    @Test("each fetch gets an ID of its own; replies finish them in whatever order they come")
    func outOfOrderReplies() throws {
        var mux = FetchMultiplexer(limits: FrameLimits())
        let first = Fixtures.fullActivity(id: UUID()), second = Fixtures.fullActivity(id: UUID())
        let (r1, r2) = (Self.request(first.id), Self.request(second.id))
        let id1 = try Self.begin(&mux, r1), id2 = try Self.begin(&mux, r2)
        #expect(id1 != id2)
        #expect(mux.inFlightIDs == [id1, id2])
        // The second's answer first, its two frames interleaved with the first's.
        let a1 = Self.replies(first, r1, id: id1), a2 = Self.replies(second, r2, id: id2)
        #expect(mux.received(a2[0]).isEmpty)
        #expect(mux.received(a1[0]).isEmpty)
        let done2 = mux.received(a2[1])
        #expect(done2.map(\.id) == [id2])
        guard case .delivered(let got2, _) = done2.first?.completion else { Issue.record("\(done2)"); return }
        #expect(got2.id == second.id && got2.userInfo == second.transferredUserInfo)
        let done1 = mux.received(a1[1])
        guard case .delivered(let got1, _) = done1.first?.completion else { Issue.record("\(done1)"); return }
        #expect(got1.id == first.id)
        #expect(mux.inFlight == 0 && mux.isOpen)
    }

    @Test("a source's error fails that fetch alone, with the source's code; the others go on")
    func errorForOne() throws {
        var mux = FetchMultiplexer(limits: FrameLimits())
        let held = Fixtures.fullActivity(id: UUID())
        let (gone, kept) = (Self.request(UUID()), Self.request(held.id))
        let idGone = try Self.begin(&mux, gone), idKept = try Self.begin(&mux, kept)
        let done = mux.received(Self.replies(nil, gone, id: idGone)[0])
        guard case .failed(let code, let message) = done.first?.completion else { Issue.record("\(done)"); return }
        #expect(code == .userActivityHandoffFailed)
        #expect(message.contains("no longer offered"))
        #expect(mux.inFlightIDs == [idKept])
        _ = Self.replies(held, kept, id: idKept).map { mux.received($0) }
        #expect(mux.inFlight == 0)
    }

    @Test("a userInfo over the limit fails its fetch with 4611 and leaves the connection open")
    func userInfoTooLargeForOne() throws {
        var mux = FetchMultiplexer(limits: FrameLimits(maxUserInfoBytes: 16))
        let big = Fixtures.fullActivity(id: UUID())
        let request = Self.request(big.id)
        let id = try Self.begin(&mux, request)
        let frames = Self.replies(big, request, id: id)
        #expect(mux.received(frames[0]).isEmpty)
        let done = mux.received(frames[1])
        guard case .failed(let code, let message) = done.first?.completion else { Issue.record("\(done)"); return }
        #expect(code == .userActivityHandoffUserInfoTooLarge)
        #expect(message.contains("limits.maxUserInfoBytes (16)"))
        #expect(mux.isOpen)
    }

    @Test("a reply for a fetch abandoned after its deadline is ignored")
    func abandoned() throws {
        var mux = FetchMultiplexer(limits: FrameLimits())
        let held = Fixtures.fullActivity(id: UUID())
        let request = Self.request(held.id)
        let id = try Self.begin(&mux, request)
        mux.abandon(id)
        #expect(Self.replies(held, request, id: id).flatMap { mux.received($0) }.isEmpty)
        #expect(mux.isOpen)
    }

    @Test("the connection drops: fetches with no answer yet are retried, one cut short fails with 4608, no new one starts")
    func dropWithRequestsInFlight() throws {
        var mux = FetchMultiplexer(limits: FrameLimits())
        let held = Fixtures.fullActivity(id: UUID())
        let (cut, waiting) = (Self.request(held.id), Self.request(UUID()))
        let idCut = try Self.begin(&mux, cut), idWaiting = try Self.begin(&mux, waiting)
        #expect(mux.received(Self.replies(held, cut, id: idCut)[0]).isEmpty)
        let done = Dictionary(uniqueKeysWithValues: mux.ended(nil).map { ($0.id, $0.completion) })
        #expect(done[idWaiting] == .retry)
        guard case .failed(let code, let message)? = done[idCut] else { Issue.record("\(done)"); return }
        #expect(code == .userActivityHandoffFailed)
        #expect(message.contains("closed the connection before the activity arrived"))
        #expect(!mux.isOpen)
        #expect(mux.begin(waiting, hello: Fixtures.hello(), peerName: "Desktop") == nil)
    }

    @Test("an untagged error (the source refusing the connection) fails every fetch in flight with its code")
    func untaggedError() throws {
        var mux = FetchMultiplexer(limits: FrameLimits())
        let a = try Self.begin(&mux, Self.request(UUID())), b = try Self.begin(&mux, Self.request(UUID()))
        let refusal = PeerMessage.error(code: HandoffError.Code.userActivityConnectionUnavailable.rawValue, message: "not paired").frame
        let done = mux.received(refusal)
        #expect(Set(done.map(\.id)) == [a, b])
        #expect(done.allSatisfy { $0.completion == .failed(code: .userActivityConnectionUnavailable, message: "not paired") })
        #expect(!mux.isOpen)
    }

    @Test("IDs are unique among the requests in flight and never 0, across the wrap of the counter")
    func uniqueIDs() throws {
        var mux = FetchMultiplexer(limits: FrameLimits())
        var seen: Set<UInt32> = []
        for _ in 0..<1000 { seen.insert(try Self.begin(&mux, Self.request(UUID()))) }
        #expect(seen.count == 1000 && !seen.contains(0))
    }

    @Test("RequestSlots: up to the cap at once; the next waits until one is given back, in order")
    func slotsCap() async {
        let slots = RequestSlots(capacity: 2)
        await slots.acquire()
        #expect(slots.tryAcquire())
        #expect(!slots.tryAcquire())
        #expect(slots.inUse == 2)
        let order = OrderRecorder()
        async let third: Void = { await slots.acquire(); order.append(3) }()
        while slots.waiting < 1 { await Task.yield() }
        async let fourth: Void = { await slots.acquire(); order.append(4) }()
        while slots.waiting < 2 { await Task.yield() }
        #expect(order.values.isEmpty)
        slots.release()
        await third
        #expect(order.values == [3])
        slots.release()
        await fourth
        #expect(order.values == [3, 4])
        #expect(slots.inUse == 2)
        slots.release()
        slots.release()
        #expect(slots.inUse == 0)
    }

    @Test("RequestSlots: a waiter cancelled before a slot frees gets none, and the slot goes to the next")
    func slotsCancelledWaiter() async {
        let slots = RequestSlots(capacity: 1)
        #expect(await slots.acquireUnlessCancelled())
        let waiter = Task { await slots.acquireUnlessCancelled() }
        while slots.waiting < 1 { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(slots.waiting == 0)
        slots.release()
        #expect(slots.inUse == 0, "no slot was kept for the cancelled waiter")
        #expect(slots.tryAcquire())
    }
}

/// Values appended from several tasks.
final class OrderRecorder: Sendable {
    private let state = Mutex<[Int]>([])
    func append(_ value: Int) { state.withLock { $0.append(value) } }
    var values: [Int] { state.withLock { $0 } }
}
