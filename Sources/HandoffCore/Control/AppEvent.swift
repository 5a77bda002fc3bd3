#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the agent tells a client on its control connection, unasked: a registered app's
/// NSUserActivity callbacks, and the pairing prompts of `handoff pair` (docs/PROTOCOL.md,
/// "Events"). On the wire: `{"event": NAME, ...fields}`, with `replyID` when the agent waits for
/// a `reply` (``AppEventMessage``).
public enum AppEvent: Sendable, Equatable {
    /// A peer's activity of this type is being continued for the app (before its data arrives).
    case willContinue(Continuing)
    /// The activity arrived: the app continues it and replies `handled`.
    case continueActivity(Continuing, activity: Activity, sourceApplication: String?)
    /// A continuation announced with `willContinue` failed.
    case didFail(Continuing, error: HandoffError)
    /// A peer is about to fetch one of the app's activities: the app saves it and replies with it.
    case willSave(activityID: UUID)
    /// A peer continued one of the app's activities.
    case wasContinued(activityID: UUID, continuationID: UUID, peer: String)
    /// A peer sent the app a URL, or a file the agent wrote to its Inbox (`inboxFile`).
    case openURL(OpenedURL)
    /// A continuing app asked for streams to one of the app's activities.
    case streamsRequested(activityID: UUID, streamID: UUID)
    /// `handoff pair --accept`: a device asks to pair; `deviceID` is what its certificate proves.
    case pairRequest(peer: String, deviceID: String)
    /// `handoff pair`: the code to compare; the client replies `accept`.
    case pairCode(code: String, peer: String, deviceID: String)
    /// After `watch`: something the agent learnt (``AgentEvent``).
    case agent(AgentEvent)

    /// The continuation an event is about.
    public struct Continuing: Sendable, Equatable {
        public var continuationID: UUID
        public var activityType: String
        /// The peer's name as this host stored it when pairing.
        public var peer: String

        public init(continuationID: UUID, activityType: String, peer: String) {
            self.continuationID = continuationID
            self.activityType = activityType
            self.peer = peer
        }
    }

    /// What `openURL` carries.
    public struct OpenedURL: Sendable, Equatable {
        public var url: URL
        public var peer: String
        /// Whether `url` is a file the agent wrote to the app's Inbox (the only file URL an app
        /// is ever handed).
        public var inboxFile: Bool
        public var sourceApplication: String?
        public var annotation: PropertyListValue?

        public init(url: URL, peer: String, inboxFile: Bool, sourceApplication: String? = nil, annotation: PropertyListValue? = nil) {
            self.url = url
            self.peer = peer
            self.inboxFile = inboxFile
            self.sourceApplication = sourceApplication
            self.annotation = annotation
        }
    }

    /// The event's name on the wire.
    public var name: String {
        switch self {
        case .willContinue: "willContinue"
        case .continueActivity: "continue"
        case .didFail: "didFail"
        case .willSave: "willSave"
        case .wasContinued: "wasContinued"
        case .openURL: "openURL"
        case .streamsRequested: "streamsRequested"
        case .pairRequest: "pairRequest"
        case .pairCode: "pairCode"
        case .agent(let event): event.name
        }
    }

    /// The wire form's fields, `event` included.
    public var json: JSONValue {
        if case .agent(let event) = self { return event.json }
        var body: [String: JSONValue] = ["event": .string(name)]
        func add(_ c: Continuing) {
            body["continuationID"] = .string(c.continuationID.uuidString)
            body["activityType"] = .string(c.activityType)
            body["peer"] = .string(c.peer)
        }
        switch self {
        case .willContinue(let c): add(c)
        case .continueActivity(let c, let activity, let source):
            add(c)
            body["activity"] = activity.json
            if let source { body["sourceApplication"] = .string(source) }
        case .didFail(let c, let error):
            add(c)
            body["error"] = ControlProtocol.errorJSON(error)
        case .willSave(let id): body["activityID"] = .string(id.uuidString)
        case .wasContinued(let id, let continuationID, let peer):
            body["activityID"] = .string(id.uuidString)
            body["continuationID"] = .string(continuationID.uuidString)
            body["peer"] = .string(peer)
        case .openURL(let opened):
            body["url"] = .string(opened.url.absoluteString)
            body["peer"] = .string(opened.peer)
            body["inboxFile"] = .bool(opened.inboxFile)
            if let source = opened.sourceApplication { body["sourceApplication"] = .string(source) }
            if let annotation = opened.annotation { body["annotation"] = annotation.json }
        case .streamsRequested(let id, let streamID):
            body["activityID"] = .string(id.uuidString)
            body["streamID"] = .string(streamID.uuidString)
        case .pairRequest(let peer, let deviceID):
            body["peer"] = .string(peer)
            body["deviceID"] = .string(deviceID)
        case .pairCode(let code, let peer, let deviceID):
            body["code"] = .string(code)
            body["peer"] = .string(peer)
            body["deviceID"] = .string(deviceID)
        case .agent: break
        }
        return .object(body)
    }

    /// Reads an event; nil for an event this version does not know, or one with missing fields
    /// (a client ignores those, and replies to them with an empty result if asked).
    public init?(json body: JSONValue) {
        func uuid(_ key: String) -> UUID? { body[key]?.stringValue.flatMap(UUID.init(uuidString:)) }
        func text(_ key: String) -> String? { body[key]?.stringValue }
        // Older agents left out fields an app does not need: default them.
        var continuing = Continuing(continuationID: uuid("continuationID") ?? UUID.random(), activityType: text("activityType") ?? "", peer: text("peer") ?? "")
        switch text("event") {
        case "willContinue": self = .willContinue(continuing)
        case "continue":
            guard let json = body["activity"], let activity = try? Activity(json: json) else { return nil }
            if continuing.activityType.isEmpty { continuing.activityType = activity.activityType.rawValue }
            self = .continueActivity(continuing, activity: activity, sourceApplication: text("sourceApplication"))
        case "didFail":
            self = .didFail(continuing, error: ControlProtocol.error(fromJSON: body["error"]))
        case "willSave":
            guard let id = uuid("activityID") else { return nil }
            self = .willSave(activityID: id)
        case "wasContinued":
            guard let id = uuid("activityID") else { return nil }
            self = .wasContinued(activityID: id, continuationID: uuid("continuationID") ?? UUID.random(), peer: text("peer") ?? "")
        case "openURL":
            guard let url = text("url").flatMap(URL.init(string:)) else { return nil }
            self = .openURL(OpenedURL(url: url, peer: text("peer") ?? "", inboxFile: body["inboxFile"]?.boolValue == true,
                                      sourceApplication: text("sourceApplication"),
                                      annotation: body["annotation"].flatMap { try? PropertyListValue(json: $0) }))
        case "streamsRequested":
            guard let id = uuid("activityID"), let streamID = uuid("streamID") else { return nil }
            self = .streamsRequested(activityID: id, streamID: streamID)
        case "pairRequest": self = .pairRequest(peer: text("peer") ?? "?", deviceID: text("deviceID") ?? "?")
        case "pairCode": self = .pairCode(code: text("code") ?? "?", peer: text("peer") ?? "?", deviceID: text("deviceID") ?? "?")
        default:
            guard let event = AgentEvent(json: body) else { return nil }
            self = .agent(event)
        }
    }
}

/// An event as it travels: the event, and the `replyID` its `reply` must carry when the agent
/// waits for one.
public struct AppEventMessage: Sendable, Equatable {
    public var event: AppEvent
    public var replyID: UUID?

    public init(_ event: AppEvent, replyID: UUID? = nil) {
        self.event = event
        self.replyID = replyID
    }

    /// The wire form.
    public var json: JSONValue {
        guard case .object(var body) = event.json else { return event.json }
        if let replyID { body["replyID"] = .string(replyID.uuidString) }
        return .object(body)
    }

    /// Whether a control message is an event (it has `event`), not a response.
    public static func isEvent(_ body: JSONValue) -> Bool { body["event"] != nil }

    /// The `replyID` of an event, also of one this version does not know.
    public static func replyID(of body: JSONValue) -> UUID? { body["replyID"]?.stringValue.flatMap(UUID.init(uuidString:)) }
}

/// A client's answer to an event that carried a `replyID`: `handled` for `continue` and
/// `openURL` (with `launchDeclined` when the app's launch hooks refused the launch made for it),
/// the saved `activity` for `willSave`, `accept` for `pairCode`.
public struct AppReply: Sendable, Equatable {
    public var handled: Bool?
    public var activity: JSONValue?
    public var accept: Bool?
    /// The app was started for this continuation or open, and a launch hook returned false.
    public var launchDeclined: Bool?
    /// The answer to `willContinue` (`willContinueUserActivity(withType:)`'s return value): true
    /// when the app tells the person itself that continuing is under way, so the agent shows no
    /// "continuing…" notification of its own.
    public var notifiesPerson: Bool?

    public init(handled: Bool? = nil, activity: JSONValue? = nil, accept: Bool? = nil, launchDeclined: Bool? = nil,
                notifiesPerson: Bool? = nil) {
        self.handled = handled
        self.activity = activity
        self.accept = accept
        self.launchDeclined = launchDeclined
        self.notifiesPerson = notifiesPerson
    }

    /// An empty reply: to an event the client does not know or cannot act on.
    public static let empty = AppReply()

    public var json: JSONValue {
        var body: [String: JSONValue] = [:]
        if let handled { body["handled"] = .bool(handled) }
        if let activity { body["activity"] = activity }
        if let accept { body["accept"] = .bool(accept) }
        if let launchDeclined { body["launchDeclined"] = .bool(launchDeclined) }
        if let notifiesPerson { body["notifiesPerson"] = .bool(notifiesPerson) }
        return .object(body)
    }

    public init(json: JSONValue) {
        self.init(handled: json["handled"]?.boolValue, activity: json["activity"], accept: json["accept"]?.boolValue,
                  launchDeclined: json["launchDeclined"]?.boolValue, notifiesPerson: json["notifiesPerson"]?.boolValue)
    }
}
