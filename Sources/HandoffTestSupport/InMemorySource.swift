import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// An in-memory implementation of HandoffCore's `PeerConnector` and `FrameConnection`, for tests of
// `ContinuationClient` without sockets. The source end of a connection runs the real
// `SourceSessionStateMachine` against an `InMemoryActivityTable`, and every byte that crosses the
// connection goes through a `FrameParser`, so frames are refused by header exactly as on TCP.

/// The activities a simulated source agent holds, by ID.
public final class InMemoryActivityTable: Sendable {
    private let activities: Mutex<[UUID: Activity]>

    /// Creates a table holding `activities`.
    public init(_ activities: [Activity] = []) {
        self.activities = Mutex(Dictionary(activities.map { ($0.id, $0) }, uniquingKeysWith: { _, new in new }))
    }

    /// Holds `activity` (replacing one with the same ID), as when an app makes it current.
    public func offer(_ activity: Activity) {
        activities.withLock { $0[activity.id] = activity }
    }

    /// Stops holding the activity with `id`, as when an app resigns it.
    public func resign(_ id: UUID) {
        _ = activities.withLock { $0.removeValue(forKey: id) }
    }

    /// The held activity with `id`, or nil.
    public func activity(id: UUID) -> Activity? {
        activities.withLock { $0[id] }
    }
}

/// Errors the in-memory transport itself raises.
public enum InMemoryTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connector was told to refuse connections.
    case connectionRefused(PeerEndpoint)
    /// A frame was sent on a connection this side had already closed.
    case sendOnClosedConnection
    /// A connect held with ``InMemoryConnector/Behavior/hangUntilReleased`` was released.
    case released
    /// The connection closed in the middle of a frame (`faults.dropAfterBytes`): the bytes
    /// received cannot be a whole frame.
    case truncatedFrame

    public var description: String {
        switch self {
        case .connectionRefused(let endpoint): "connection refused by \(endpoint)"
        case .sendOnClosedConnection: "send on a closed connection"
        case .released: "connect released by the test"
        case .truncatedFrame: "the connection closed in the middle of a frame"
        }
    }
}

/// The far (source) end of an in-memory connection: what it runs and how it misbehaves.
///
/// By default it is a well-behaved source agent: it runs a `SourceSessionStateMachine` with
/// `hello`, looks fetched activities up in `table` at time `now`, and sends every frame the state
/// machine produces. The knobs make it misbehave in the ways a test needs.
public struct InMemorySource: Sendable {
    /// The activities the source holds; nil for a source that runs no agent logic at all (it only
    /// sends ``initialBytes``).
    public var table: InMemoryActivityTable?
    /// The source agent's hello.
    public var hello: PeerHello
    /// The time the source checks expiration against.
    public var now: Date
    /// The limits the source applies to frames from the client.
    public var limits: FrameLimits
    /// Raw bytes the source sends as soon as the connection opens, before anything else.
    public var initialBytes: [UInt8]
    /// Send at most this many frames of the state machine's output; hold the rest back forever
    /// (until the connection is closed). `0` means the source never answers. Nil: no limit.
    public var holdBackAfterFrames: Int?
    /// Close the connection after sending this many frames of the state machine's output
    /// (`0`: right after ``initialBytes``). Nil: only close when the state machine says so.
    public var closeAfterFrames: Int?
    /// Replaces the bytes of each frame the source sends (to corrupt it, for example). Nil: the
    /// frame's own bytes.
    public var rewrite: (@Sendable (Frame) -> [UInt8])?

    /// A source with every knob spelled out; see the properties.
    public init(
        table: InMemoryActivityTable?,
        hello: PeerHello = InMemorySource.defaultHello,
        now: Date = InMemorySource.defaultNow,
        limits: FrameLimits = FrameLimits(),
        initialBytes: [UInt8] = [],
        holdBackAfterFrames: Int? = nil,
        closeAfterFrames: Int? = nil,
        rewrite: (@Sendable (Frame) -> [UInt8])? = nil
    ) {
        self.table = table
        self.hello = hello
        self.now = now
        self.limits = limits
        self.initialBytes = initialBytes
        self.holdBackAfterFrames = holdBackAfterFrames
        self.closeAfterFrames = closeAfterFrames
        self.rewrite = rewrite
    }

    /// The hello of the simulated source agent unless a test gives another.
    public static let defaultHello = PeerHello(agentID: "source-agent-id", name: "Source")
    /// The source's clock reading unless a test gives another: 2027-01-15 08:00:00 UTC.
    public static let defaultNow = Date(timeIntervalSince1970: 1_800_000_000)

    /// A well-behaved source agent holding the activities in `table`.
    public static func agent(_ table: InMemoryActivityTable, hello: PeerHello = defaultHello, now: Date = defaultNow) -> InMemorySource {
        InMemorySource(table: table, hello: hello, now: now)
    }

    /// A peer that runs no agent logic: it sends `bytes` when the connection opens, then closes
    /// the connection if `thenClose` (else it stays silent).
    public static func raw(_ bytes: [UInt8], thenClose: Bool = false) -> InMemorySource {
        InMemorySource(table: nil, initialBytes: bytes, closeAfterFrames: thenClose ? 0 : nil)
    }

    /// A peer that runs no agent logic: it sends `frames` when the connection opens, then closes
    /// the connection if `thenClose` (else it stays silent).
    public static func frames(_ frames: [Frame], thenClose: Bool = false) -> InMemorySource {
        raw(frames.flatMap(\.bytes), thenClose: thenClose)
    }
}
