#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something the agent learnt, as `handoff watch`, HandoffKit's ``AgentEvent`` sequence and the
/// desktop notifications see it (docs/PROTOCOL.md, "Watching"). On the wire, after a `watch`
/// request: `{"event": NAME, "time": ISO 8601, ...fields}`.
public struct AgentEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// A reachable paired device offers a new current activity.
        case activityOffered(OfferedActivity)
        /// An activity is no longer on offer: its device resigned it, replaced it, left or
        /// stopped answering.
        case activityWithdrawn(id: UUID, peer: String)
        /// A paired device was found, or answers again.
        case peerReachable(peer: String)
        /// A paired device left or stopped answering.
        case peerUnreachable(peer: String)
        /// Continuing a peer's activity here is under way (its data is on its way). `appNotifies`:
        /// the app that continues it answered `willContinueUserActivity(withType:)` with true, so
        /// it tells the person itself and the agent shows no "continuing…" notification. For the
        /// agent's own notifications: `watch` does not send it (``isWatched``).
        case continuing(id: UUID, peer: String, appNotifies: Bool)
        /// An activity was continued here; `by` is what took it: `app`, `handler`,
        /// `streamingHandler` or `urlOpener` (``ContinueResult/by``).
        case continued(id: UUID, peer: String, by: String)
        /// Continuing an activity here failed.
        case continueFailed(id: UUID, error: HandoffError)
        /// `handoff pause`: this host stopped advertising its activities and notifying.
        case paused
        /// `handoff resume`: advertising and notifications are back.
        case resumed
        /// A paired device's `handoff send` arrived in the download directory.
        case filesReceived(ReceivedFiles)
    }

    public var kind: Kind
    /// When the agent learnt it.
    public var time: Date

    public init(_ kind: Kind, at time: Date) {
        self.kind = kind
        self.time = time
    }

    /// Whether `watch` sends the event to its clients (`handoff watch`, HandoffKit's
    /// ``AgentEvent`` sequence): every kind but `continuing`, which only the desktop
    /// notifications follow, so a watcher sees one `continued` or `continueFailed` per
    /// continuation, as before.
    public var isWatched: Bool {
        if case .continuing = kind { return false }
        return true
    }

    /// The event's name on the wire.
    public var name: String {
        switch kind {
        case .activityOffered: "activityOffered"
        case .activityWithdrawn: "activityWithdrawn"
        case .peerReachable: "peerReachable"
        case .peerUnreachable: "peerUnreachable"
        case .continuing: "continuing"
        case .continued: "continued"
        case .continueFailed: "continueFailed"
        case .paused: "paused"
        case .resumed: "resumed"
        case .filesReceived: "filesReceived"
        }
    }

    /// The activity the event is about, if any.
    public var activityID: UUID? {
        switch kind {
        case .activityOffered(let offered): offered.id
        case .activityWithdrawn(let id, _), .continuing(let id, _, _), .continued(let id, _, _), .continueFailed(let id, _): id
        case .peerReachable, .peerUnreachable, .paused, .resumed, .filesReceived: nil
        }
    }

    /// The wire form: `event`, `time`, then the kind's fields.
    public var json: JSONValue {
        var body: [String: JSONValue] = ["event": .string(name), "time": .string(Self.timeText(time))]
        switch kind {
        case .activityOffered(let offered):
            body["id"] = .string(offered.id.uuidString)
            body["peer"] = .string(offered.peer)
            body["activityType"] = .string(offered.activityType)
            body["title"] = offered.title.json
            if let offeredAt = offered.offeredAt { body["offeredAt"] = .string(Self.timeText(offeredAt)) }
        case .activityWithdrawn(let id, let peer):
            body["id"] = .string(id.uuidString)
            body["peer"] = .string(peer)
        case .peerReachable(let peer), .peerUnreachable(let peer):
            body["peer"] = .string(peer)
        case .continuing(let id, let peer, let appNotifies):
            body["id"] = .string(id.uuidString)
            body["peer"] = .string(peer)
            body["appNotifies"] = .bool(appNotifies)
        case .continued(let id, let peer, let by):
            body["id"] = .string(id.uuidString)
            body["peer"] = .string(peer)
            body["by"] = .string(by)
        case .continueFailed(let id, let error):
            body["id"] = .string(id.uuidString)
            body["error"] = ControlProtocol.errorJSON(error)
        case .paused, .resumed: break
        case .filesReceived(let received):
            body["id"] = .string(received.id.uuidString)
            body["peer"] = .string(received.peer)
            body["files"] = .integer(received.files)
            body["bytes"] = .integer(received.bytes)
            body["directory"] = .string(received.directory)
            body["summary"] = .string(received.summary)
        }
        return .object(body)
    }

    /// Reads an event; nil when it is not one of these or lacks a field it needs.
    public init?(json body: JSONValue) {
        guard let name = body["event"]?.stringValue else { return nil }
        let time = body["time"]?.stringValue.flatMap(Self.parseTime) ?? Date(timeIntervalSince1970: 0)
        let id = body.uuid("id")
        let peer = body.optionalText("peer")
        let kind: Kind
        switch name {
        case "activityOffered":
            guard let id, let peer else { return nil }
            kind = .activityOffered(OfferedActivity(id: id, peer: peer, activityType: body.text("activityType"), title: body.optionalText("title"),
                                                    offeredAt: body.optionalText("offeredAt").flatMap(Self.parseTime)))
        case "activityWithdrawn":
            guard let id, let peer else { return nil }
            kind = .activityWithdrawn(id: id, peer: peer)
        case "peerReachable", "peerUnreachable":
            guard let peer else { return nil }
            kind = name == "peerReachable" ? .peerReachable(peer: peer) : .peerUnreachable(peer: peer)
        case "continuing":
            guard let id, let peer else { return nil }
            kind = .continuing(id: id, peer: peer, appNotifies: body["appNotifies"]?.boolValue ?? false)
        case "continued":
            guard let id, let peer else { return nil }
            kind = .continued(id: id, peer: peer, by: body.text("by"))
        case "continueFailed":
            guard let id else { return nil }
            kind = .continueFailed(id: id, error: ControlProtocol.error(fromJSON: body["error"]))
        case "paused": kind = .paused
        case "resumed": kind = .resumed
        case "filesReceived":
            guard let id, let peer else { return nil }
            kind = .filesReceived(ReceivedFiles(id: id, peer: peer, files: Int(clamping: body["files"]?.int64Value ?? 0),
                                                bytes: Int(clamping: body["bytes"]?.int64Value ?? 0), directory: body.text("directory")))
        default: return nil
        }
        self.init(kind, at: time)
    }

    /// ISO 8601 in UTC with milliseconds, as `time` carries it.
    public static func timeText(_ date: Date) -> String {
        PropertyListValue.formatISO8601(date)
    }

    /// Reads a `time` (ISO 8601, with or without fractional seconds).
    public static func parseTime(_ text: String) -> Date? {
        PropertyListValue.parseISO8601(text)
    }
}
