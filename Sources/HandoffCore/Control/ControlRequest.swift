#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request on the agent's control socket, as the CLI, HandoffKit apps and the agent all see it
/// (docs/PROTOCOL.md, "Control socket"). On the wire it is a JSON object
/// `{"command": NAME, ...arguments}`; ``init(json:)`` checks every argument once, so the agent
/// acts only on typed values and a client in another language gets the same errors.
public enum ControlRequest: Sendable, Equatable {
    /// `status`: the agent, its activities and apps.
    case status
    /// `peers`: the agents discovered.
    case peers
    /// `list`: the activities paired peers offer.
    case list
    /// `publish`: makes an activity current (its `id` is made up if missing).
    case publish(Activity)
    /// `resign`: withdraws an activity.
    case resign(id: UUID)
    /// `continue`: continues a peer's activity, at most once per idempotency key.
    case continueActivity(id: UUID, idempotencyKey: String?)
    /// `open`: sends a URL or a file to an app on a peer.
    case open(OpenCommand)
    /// `pair`: waits for a device to pair (`accept`) or pairs with one.
    case pair(PairTarget)
    /// `pairable`: the devices accepting pairing now.
    case pairable
    /// `faults`: changes and shows the fault plan (docs/FAULTS.md). `set` is checked by the plan.
    case faults(set: JSONValue?, clear: FaultClearing?)
    /// `trustList`: the paired devices.
    case trustList
    /// `trustAdd`: pairs with a device by its ID (checked by the agent, which knows the format),
    /// with addresses where it can be reached without DNS-SD.
    case trustAdd(deviceID: String, name: String?, addresses: [PeerAddress] = [])
    /// `trustRemove`: unpairs a device.
    case trustRemove(deviceID: String)
    /// `registerApp`: this connection is the app the manifest describes; events follow.
    case registerApp(AppManifest)
    /// `reply`: answers an event that carried a `replyID`.
    case reply(replyID: UUID, AppReply)
    /// `openStreams`: a continuing app's end of a stream pair (the connection's first request).
    case openStreams(continuationID: UUID)
    /// `acceptStreams`: the source app's end of a stream pair (the connection's first request).
    case acceptStreams(streamID: UUID)
    /// `sendFiles`: `handoff send`'s files to a paired device (the connection's first request);
    /// once answered (``SendFilesResult``), the connection carries the files' frames.
    case sendFiles(peer: String, offer: FileOffer)
    /// `watch`: the agent's events (``AgentEvent``) follow on this connection until it closes.
    case watch
    /// `pause` (true) and `resume` (false): Apple's "Allow Handoff" switch.
    case setPaused(Bool)
    /// `diagnose`: what the agent sees for `handoff doctor` (``AgentDiagnosis``).
    case diagnose
    /// `search`: the saved activities that match a query, here or on every paired device too.
    case search(query: String, devices: SearchScope, limit: Int)
    /// `deleteSaved`: deletes saved activities (an app's own only, when an app asks).
    case deleteSaved(SavedSelection)
    /// `copy`: offers a clipboard item to the paired devices; its bytes follow the request as
    /// stream frames (``startsByteStream``). `size`, when the client knows it, lets the agent
    /// refuse an item over `clipboard.maxBytes` before any byte is sent.
    case copy(mimeType: String, size: Int?)
    /// `paste`: the newest clipboard item of a reachable paired device (or of `from`); its bytes
    /// follow the answer as stream frames.
    case paste(from: String?)
    /// `link`: a lasting link to a held or saved activity's content (``HandoffLink``).
    case link(LinkSource)
    /// `continueLink`: continues a link's content in the local app that declares its type.
    case continueLink(String)

    /// Where `open` sends: a URL, a file's name and bytes, or a file's name and size whose bytes
    /// follow as stream frames on the connection (`handoff open`: the request is then the
    /// connection's first, and the agent relays the bytes to the peer).
    public enum OpenTarget: Sendable, Equatable {
        case url(URL)
        case file(name: String, data: [UInt8])
        case streamedFile(name: String, size: Int)
    }

    /// The arguments of `open`.
    public struct OpenCommand: Sendable, Equatable {
        /// The peer, by name as `handoff peers` shows it.
        public var peer: String
        /// The receiving app's bundle ID.
        public var bundleID: String
        public var target: OpenTarget
        public var annotation: PropertyListValue?

        public init(peer: String, bundleID: String, target: OpenTarget, annotation: PropertyListValue? = nil) {
            self.peer = peer
            self.bundleID = bundleID
            self.target = target
            self.annotation = annotation
        }
    }

    /// Whom `pair` pairs with.
    public enum PairTarget: Sendable, Equatable {
        /// Wait for another device (`handoff pair --accept`).
        case accept
        /// A device accepting pairing: its name, or HOST:PORT.
        case peer(String)
    }

    /// Which faults `faults` turns off.
    public enum FaultClearing: Sendable, Equatable {
        case all
        case named([String])
    }

    /// The commands an agent knows, as named on the wire.
    public static let commandNames = [
        "status", "peers", "list", "publish", "resign", "continue", "open", "pair", "pairable", "faults", "trustList", "trustAdd",
        "trustRemove", "registerApp", "reply", "watch", "pause", "resume", "diagnose", "search", "deleteSaved", "copy", "paste",
        "link", "continueLink",
    ]

    /// The request's name on the wire.
    public var command: String {
        switch self {
        case .status: "status"
        case .peers: "peers"
        case .list: "list"
        case .publish: "publish"
        case .resign: "resign"
        case .continueActivity: "continue"
        case .open: "open"
        case .pair: "pair"
        case .pairable: "pairable"
        case .faults: "faults"
        case .trustList: "trustList"
        case .trustAdd: "trustAdd"
        case .trustRemove: "trustRemove"
        case .registerApp: "registerApp"
        case .reply: "reply"
        case .openStreams: "openStreams"
        case .acceptStreams: "acceptStreams"
        case .sendFiles: "sendFiles"
        case .watch: "watch"
        case .setPaused(let paused): paused ? "pause" : "resume"
        case .diagnose: "diagnose"
        case .search: "search"
        case .deleteSaved: "deleteSaved"
        case .link: "link"
        case .continueLink: "continueLink"
        case .copy: "copy"
        case .paste: "paste"
        }
    }

    /// Whether the request opens a connection of its own whose bytes travel as stream frames
    /// after it (`copy`) or after its answer (`paste`).
    public var startsByteStream: Bool {
        switch self {
        case .copy, .paste: true
        default: false
        }
    }

    /// Whether the request opens a connection of its own for a stream pair.
    public var startsStreamSession: Bool {
        switch self {
        case .openStreams, .acceptStreams, .sendFiles: true
        case .open(let open): if case .streamedFile = open.target { true } else { false }
        default: false
        }
    }

    /// The wire form: `{"command": NAME, ...arguments}`.
    public var json: JSONValue {
        var body: [String: JSONValue] = ["command": .string(command)]
        switch self {
        case .status, .peers, .list, .pairable, .trustList, .watch, .setPaused, .diagnose: break
        case .publish(let activity): body["activity"] = activity.json
        case .resign(let id): body["id"] = .string(id.uuidString)
        case .continueActivity(let id, let key):
            body["id"] = .string(id.uuidString)
            if let key { body["idempotencyKey"] = .string(key) }
        case .open(let open):
            body["peer"] = .string(open.peer)
            body["app"] = .string(open.bundleID)
            switch open.target {
            case .url(let url): body["url"] = .string(url.absoluteString)
            case .file(let name, let data): body["file"] = .object(["name": .string(name), "data": .string(Data(data).base64EncodedString())])
            case .streamedFile(let name, let size): body["file"] = .object(["name": .string(name), "size": .integer(size)])
            }
            if let annotation = open.annotation { body["annotation"] = annotation.json }
        case .pair(.accept): body["accept"] = .bool(true)
        case .pair(.peer(let peer)): body["peer"] = .string(peer)
        case .faults(let set, let clear):
            if let set { body["set"] = set }
            switch clear {
            case nil: break
            case .all?: body["clear"] = .string("all")
            case .named(let names)?: body["clear"] = .array(names.map { .string($0) })
            }
        case .trustAdd(let id, let name, let addresses):
            body["deviceID"] = .string(id)
            if let name { body["name"] = .string(name) }
            if !addresses.isEmpty { body["addresses"] = .array(addresses.map { .string($0.description) }) }
        case .trustRemove(let id): body["deviceID"] = .string(id)
        case .registerApp(let manifest): body["app"] = manifest.json
        case .reply(let id, let reply):
            body["replyID"] = .string(id.uuidString)
            body["result"] = reply.json
        case .openStreams(let id): body["continuationID"] = .string(id.uuidString)
        case .acceptStreams(let id): body["streamID"] = .string(id.uuidString)
        case .search, .deleteSaved: addSearchArguments(to: &body)
        case .copy(let mimeType, let size):
            body["type"] = .string(mimeType)
            if let size { body["size"] = .integer(size) }
        case .paste(let from):
            if let from { body["from"] = .string(from) }
        case .sendFiles(let peer, let offer):
            body["peer"] = .string(peer)
            body["files"] = offer.json
        case .link, .continueLink: addLinkArguments(to: &body)
        }
        return .object(body)
    }

    /// Reads and checks a request. The error says what is wrong and what to send instead.
    public init(json body: JSONValue) throws(HandoffError) {
        guard let command = body["command"]?.stringValue else { throw .handoffFailed("the request has no \"command\"") }
        func uuid(_ key: String, _ hint: String) throws(HandoffError) -> UUID {
            guard let id = body[key]?.stringValue.flatMap(UUID.init(uuidString:)) else { throw .handoffFailed("\(command) needs \"\(key)\", \(hint)") }
            return id
        }
        switch command {
        case "status": self = .status
        case "peers": self = .peers
        case "list": self = .list
        case "pairable": self = .pairable
        case "trustList": self = .trustList
        case "watch": self = .watch
        case "diagnose": self = .diagnose
        case "pause", "resume": self = .setPaused(command == "pause")
        case "publish":
            guard let activityJSON = body["activity"] else { throw .handoffFailed("publish needs an \"activity\" object") }
            do { self = .publish(try Activity(json: activityJSON, defaultID: UUID.random())) } catch { throw .handoffFailed("cannot publish: \(error)") }
        case "resign": self = .resign(id: try uuid("id", "an activity UUID as printed by publish"))
        case "continue":
            let id = try uuid("id", "an activity UUID as printed by `handoff list`")
            self = .continueActivity(id: id, idempotencyKey: try Self.idempotencyKey(body["idempotencyKey"]))
        case "open": self = .open(try Self.openCommand(body))
        case "pair":
            if body["accept"]?.boolValue == true {
                self = .pair(.accept)
            } else {
                guard let target = body["peer"]?.stringValue, !target.isEmpty else {
                    throw .handoffFailed("pair needs \"peer\" (the other device's name as its `handoff pair --accept` shows it, or HOST:PORT) or \"accept\": true")
                }
                self = .pair(.peer(target))
            }
        case "faults": self = .faults(set: body["set"].flatMap { $0 == .null ? nil : $0 }, clear: try Self.faultClearing(body["clear"]))
        case "trustAdd", "trustRemove":
            guard let id = body["deviceID"]?.stringValue else { throw .handoffFailed("\(command) needs \"deviceID\", as `handoff status` prints it") }
            self = command == "trustAdd" ? .trustAdd(deviceID: id, name: body["name"]?.stringValue, addresses: try Self.addresses(body["addresses"]))
                : .trustRemove(deviceID: id)
        case "registerApp":
            do { self = .registerApp(try AppManifest(json: body["app"] ?? .null)) } catch { throw .handoffFailed("registerApp: \(error)") }
        case "reply": self = .reply(replyID: try uuid("replyID", "from the event it answers"), AppReply(json: body["result"] ?? .null))
        case "openStreams":
            guard let id = body["continuationID"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                throw .handoffFailed("openStreams needs the continuationID of an activity continued by this app on this host")
            }
            self = .openStreams(continuationID: id)
        case "acceptStreams":
            guard let id = body["streamID"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                throw .handoffFailed("no stream request with that streamID is waiting (it may have timed out)")
            }
            self = .acceptStreams(streamID: id)
        case "search": self = try Self.search(body)
        case "deleteSaved": self = .deleteSaved(try Self.savedSelection(body))
        case "copy":
            let mimeType = body["type"]?.stringValue ?? ClipboardItemInfo.defaultMimeType
            if let problem = ClipboardItemInfo.mimeTypeProblem(mimeType) { throw .handoffFailed("copy: \(problem)") }
            var size: Int?
            if let value = body["size"], value != .null {
                guard let number = value.int64Value, number >= 0 else { throw .handoffFailed("copy: \"size\" must be a number of bytes") }
                size = Int(clamping: number)
            }
            self = .copy(mimeType: mimeType, size: size)
        case "paste":
            let from = body["from"]?.stringValue
            if let from, from.isEmpty { throw .handoffFailed("paste: \"from\" must name a paired device, as `handoff peers` shows it") }
            self = .paste(from: from)
        case "sendFiles":
            guard let peer = body["peer"]?.stringValue, !peer.isEmpty else { throw .handoffFailed("sendFiles needs \"peer\", a paired device's name") }
            self = .sendFiles(peer: peer, offer: try FileOffer(json: body["files"] ?? .null))
        case "link": self = .link(try Self.linkSource(body))
        case "continueLink": self = .continueLink(try Self.linkText(body))
        default:
            throw .handoffFailed("unknown command \"\(command)\"; this agent knows \(Self.commandNames.dropLast().joined(separator: ", ")) and \(Self.commandNames.last!)")
        }
    }

    /// The most bytes an idempotency key may have.
    public static let maximumIdempotencyKeyBytes = 200

    /// Checks an idempotency key: a string of 1 to 200 bytes (nil when absent).
    public static func checkIdempotencyKey(_ key: String) throws(HandoffError) {
        guard !key.isEmpty, key.utf8.count <= maximumIdempotencyKeyBytes else {
            throw .handoffFailed("\"idempotencyKey\" must be a string of 1 to \(maximumIdempotencyKeyBytes) bytes, e.g. a UUID; reuse it only to retry the same continuation")
        }
    }

    private static func idempotencyKey(_ value: JSONValue?) throws(HandoffError) -> String? {
        guard let value, value != .null else { return nil }
        guard let text = value.stringValue else {
            throw .handoffFailed("continue: \"idempotencyKey\" must be a string of 1 to \(maximumIdempotencyKeyBytes) bytes, e.g. a UUID; reuse it only to retry the same continuation")
        }
        do { try checkIdempotencyKey(text) } catch { throw .handoffFailed("continue: \(error.message)") }
        return text
    }

    private static func openCommand(_ body: JSONValue) throws(HandoffError) -> OpenCommand {
        guard let peer = body["peer"]?.stringValue, let bundleID = body["app"]?.stringValue else {
            throw .handoffFailed("open needs \"peer\" and \"app\" (a bundle ID)")
        }
        var annotation: PropertyListValue?
        if let json = body["annotation"] {
            do { annotation = try PropertyListValue(json: json) } catch { throw .handoffFailed("open: annotation: \(error)") }
        }
        if let url = body["url"]?.stringValue {
            guard let parsed = URL(string: url), parsed.scheme != nil else { throw .handoffFailed("open: \(url) is not an absolute URL") }
            return OpenCommand(peer: peer, bundleID: bundleID, target: .url(parsed), annotation: annotation)
        }
        if let file = body["file"], let name = file["name"]?.stringValue, file["data"] == nil, let size = file["size"]?.int64Value, size >= 0 {
            return OpenCommand(peer: peer, bundleID: bundleID, target: .streamedFile(name: name, size: Int(clamping: size)), annotation: annotation)
        }
        guard let file = body["file"], let name = file["name"]?.stringValue, let data = file["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
            throw .handoffFailed("open needs \"url\" or \"file\": {\"name\", \"data\" (base64)} or {\"name\", \"size\"} (the bytes follow as stream frames)")
        }
        return OpenCommand(peer: peer, bundleID: bundleID, target: .file(name: name, data: Array(data)), annotation: annotation)
    }

    private static func addresses(_ value: JSONValue?) throws(HandoffError) -> [PeerAddress] {
        guard let value, value != .null else { return [] }
        guard let items = value.arrayValue else { throw .handoffFailed("trustAdd: \"addresses\" must be a list of HOST[:PORT] strings") }
        var addresses: [PeerAddress] = []
        for item in items {
            guard let text = item.stringValue else { throw .handoffFailed("trustAdd: \"addresses\" must be a list of HOST[:PORT] strings") }
            do { addresses.append(try PeerAddress(parsing: text)) } catch { throw .handoffFailed("trustAdd: \(error)") }
        }
        return addresses
    }

    private static func faultClearing(_ value: JSONValue?) throws(HandoffError) -> FaultClearing? {
        switch value {
        case nil, .null?: return nil
        case .string("all")?: return .all
        case .array(let names)?:
            var texts: [String] = []
            for name in names {
                guard let text = name.stringValue else { throw .handoffFailed("clear: must list fault names; `handoff fault list` shows every fault") }
                texts.append(text)
            }
            return .named(texts)
        default: throw .handoffFailed("clear: must be \"all\" or a list of fault names; `handoff fault list` shows every fault")
        }
    }
}
