#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The first frame each side sends: who it is and which protocol versions it speaks.
public struct PeerHello: Sendable, Hashable {
    /// Identifies the protocol, so a stray client of another protocol is refused at once.
    public static let protocolName = "handoff"
    /// The versions this build speaks.
    public static let supportedVersions: [Int] = [2]

    /// The versions the sender speaks; a server answers with the one it picked.
    public var versions: [Int]
    /// The sender's agent ID.
    public var agentID: String
    /// The sender's agent name.
    public var name: String
    /// Whether the sender takes multiplexed requests (`request` and `reply` frames, each with a
    /// request ID) on this connection. A source answers true only when the client said true and
    /// it takes them too; an agent that does not know the field ignores it and answers without.
    public var multiplexing: Bool
    /// Whether the sender takes `subscribe` on any liveness connection (not only from a device
    /// that knows it by address) and pushes its advertisement on it: a watcher subscribes to every
    /// paired peer whose hello says so, so that a change reaches it without waiting for DNS-SD.
    /// An agent that does not know the field ignores it, and is subscribed to as before (only
    /// when known by address).
    public var pushesAdvertisements: Bool
    /// Whether the sender shares one connection per pair of devices (docs/PROTOCOL.md, "One
    /// connection per pair"): on a connection whose hellos both say so, the side that accepted it
    /// also uses it for its own liveness, subscription and fetches to the side that dialled, and
    /// that side serves them, so the pair needs no second connection. Only with `multiplexing`.
    /// An agent that does not know the field ignores it: each side then dials its own.
    public var sharedConnection: Bool

    public init(versions: [Int] = PeerHello.supportedVersions, agentID: String, name: String, multiplexing: Bool = false,
                pushesAdvertisements: Bool = false, sharedConnection: Bool = false) {
        self.versions = versions
        self.agentID = agentID
        self.name = name
        self.multiplexing = multiplexing
        self.pushesAdvertisements = pushesAdvertisements
        self.sharedConnection = sharedConnection
    }

    /// The highest version both sides speak, or nil.
    public func negotiatedVersion(with other: PeerHello) -> Int? {
        Set(versions).intersection(other.versions).max()
    }
}

/// The continuing agent's request for an activity.
public struct FetchRequest: Sendable, Hashable {
    /// The activity to fetch.
    public var activityID: UUID
    /// Identifies this continuation, for logs and exactly-once delivery.
    public var continuationID: UUID

    public init(activityID: UUID, continuationID: UUID) {
        self.activityID = activityID
        self.continuationID = continuationID
    }
}

/// A request for continuation streams to the app that published an activity.
public struct StreamRequest: Sendable, Hashable {
    public var activityID: UUID
    /// Identifies the stream pair, for logs and for pairing the source app's connection.
    public var streamID: UUID

    public init(activityID: UUID, streamID: UUID) {
        self.activityID = activityID
        self.streamID = streamID
    }
}

/// A URL or a file sent to an app on another host (UIApplication's open URL).
public struct OpenRequest: Sendable, Hashable {
    /// The receiving app's bundle ID.
    public var bundleID: String
    /// The URL to open; nil when a file follows.
    public var url: URL?
    /// The file's name as the sender gave it (the receiver sanitises it); nil for a URL.
    public var fileName: String?
    /// The file's size in bytes.
    public var fileSize: Int
    /// The sending app's bundle ID; ``commandLineSourceApplication`` for `handoff open`.
    public var sourceApplication: String?
    /// A property list from the sender.
    public var annotation: PropertyListValue?
    /// The receiver answers `streamAccepted` once it takes the file, before its bytes are sent
    /// (a relayed `handoff open`); without it the bytes follow `open` at once.
    public var answersFirst = false

    /// The `sourceApplication` of an open sent without an app (`handoff open`, or a script on
    /// the control socket): the CLI's own reverse-DNS name, so the receiving app can tell.
    public static let commandLineSourceApplication = "org.handoff.cli"

    public init(bundleID: String, url: URL? = nil, fileName: String? = nil, fileSize: Int = 0,
                sourceApplication: String? = nil, annotation: PropertyListValue? = nil) {
        self.bundleID = bundleID
        self.url = url
        self.fileName = fileName
        self.fileSize = fileSize
        self.sourceApplication = sourceApplication
        self.annotation = annotation
    }
}

/// One step of the pairing exchange (docs/SECURITY.md): commit, nonce, reveal, confirm.
public enum PairingStep: Sendable, Hashable {
    /// Initiator: its agent name and its commitment to a nonce.
    case request(name: String, commitment: [UInt8])
    /// Responder: its agent name and its nonce.
    case nonce(name: String, nonce: [UInt8])
    /// Initiator: the nonce it committed to.
    case reveal(nonce: [UInt8])
    /// Either side: whether its user confirmed the code. The advertising keys follow as
    /// ``PeerMessage/keys(advertisingKey:)`` only once both sides have confirmed, so a side that
    /// refuses, or breaks off, learns no key.
    case confirm(accepted: Bool)
}

/// A message between two agents: the decoded form of one frame.
public enum PeerMessage: Sendable, Hashable {
    case hello(PeerHello)
    case fetch(FetchRequest)
    /// The activity's fields without userInfo, and the app that published it (if any).
    case activity(Activity, source: AppIdentity? = nil)
    /// The activity's userInfo (requiredUserInfoKeys already applied by the source).
    case userInfo(UserInfo)
    /// A failure with its code and message.
    case error(code: Int, message: String)
    /// The continuing agent delivered the activity (sent on a new connection after hello).
    case continued(FetchRequest)
    /// Open continuation streams to the activity's app (sent on a new connection after hello).
    case streamOpen(StreamRequest)
    /// The source app accepted the streams.
    case streamAccepted
    /// Stream bytes.
    case streamData([UInt8])
    /// The sender will write no more stream data.
    case streamEnd
    /// Open a URL or a file in an app on the receiving host.
    case open(OpenRequest)
    /// The receiving app's answer.
    case opened(handled: Bool)
    /// A step of pairing.
    case pairing(PairingStep)
    /// The sender's current advertising key (paired agents only).
    case keys(advertisingKey: [UInt8])
    /// Liveness probe between paired agents; `sequence` comes back in the ``pong``.
    case ping(sequence: Int)
    /// The answer to a ``ping``, with its sequence number.
    case pong(sequence: Int)
    /// Send me your advertisement now and on every change (after hello, on a liveness connection).
    case subscribe
    /// The sender's sealed advertisement, as it would be on DNS-SD: its instance name (which the
    /// seal covers) and its TXT record.
    case advertisement(instanceName: String, txtRecord: [UInt8])
    /// The sender started and is back: the port its agent listens on, and its sealed
    /// advertisement as in ``advertisement(instanceName:txtRecord:)`` (after hello, on a liveness
    /// connection). The receiver reaches it at the connection's address and that port.
    case announce(port: Int, instanceName: String, txtRecord: [UInt8])
    /// The sender stops (its agent shuts down): what it announced no longer holds (after hello,
    /// on a liveness connection, which it closes next).
    case goodbye
    /// Which saved activities match a query (paired agents only).
    case searchRequest(PeerSearchRequest)
    /// The saved activities that matched, best first; `device` is left empty for the asker to fill.
    case searchResults([SavedActivity])
    /// Send me the contents of your clipboard item (after hello, on a connection of its own).
    case clipboardFetch(itemID: UUID)
    /// The clipboard item asked for; its bytes follow as ``streamData(_:)``, then ``streamEnd``.
    case clipboardItem(ClipboardItemInfo)
    /// A message of a file send (``FileTransferMessage``).
    case files(FileTransferMessage)

    /// Encodes the message as one frame; every payload is a property-list dictionary in the
    /// binary encoding.
    public var frame: Frame {
        switch self {
        case .hello(let h):
            var fields: [String: PropertyListValue] = [
                "protocol": .string(PeerHello.protocolName),
                "versions": .array(h.versions.map { .integer(Int64($0)) }),
                "agentID": .string(h.agentID),
                "name": .string(h.name),
            ]
            if h.multiplexing { fields["multiplexing"] = .bool(true) }
            if h.pushesAdvertisements { fields["advertisementPush"] = .bool(true) }
            if h.sharedConnection { fields["sharedConnection"] = .bool(true) }
            return Frame(kind: .hello, payload: PropertyListBinaryCoding.encode(fields))
        case .fetch(let f):
            return Frame(kind: .fetch, payload: PropertyListBinaryCoding.encode([
                "activityID": .uuid(f.activityID), "continuationID": .uuid(f.continuationID),
            ]))
        case .activity(let a, let source):
            var fields = a.propertyList(includingUserInfo: false)
            if let source {
                fields["sourceBundleID"] = .string(source.bundleID)
                fields["sourceTeamID"] = .string(source.teamID)
            }
            return Frame(kind: .activity, payload: PropertyListBinaryCoding.encode(fields))
        case .continued(let f):
            return Frame(kind: .continued, payload: PropertyListBinaryCoding.encode([
                "activityID": .uuid(f.activityID), "continuationID": .uuid(f.continuationID),
            ]))
        case .streamOpen(let r):
            return Frame(kind: .streamOpen, payload: PropertyListBinaryCoding.encode([
                "activityID": .uuid(r.activityID), "streamID": .uuid(r.streamID),
            ]))
        case .streamAccepted:
            return Frame(kind: .streamAccepted, payload: PropertyListBinaryCoding.encode([String: PropertyListValue]()))
        case .streamData(let bytes):
            return Frame(kind: .streamData, payload: bytes)
        case .streamEnd:
            return Frame(kind: .streamEnd, payload: [])
        case .open(let r):
            var fields: [String: PropertyListValue] = ["bundleID": .string(r.bundleID), "fileSize": .integer(Int64(r.fileSize))]
            if let url = r.url { fields["url"] = .url(url) }
            if let name = r.fileName { fields["fileName"] = .string(name) }
            if let source = r.sourceApplication { fields["sourceApplication"] = .string(source) }
            if let annotation = r.annotation { fields["annotation"] = annotation }
            if r.answersFirst { fields["answersFirst"] = .bool(true) }
            return Frame(kind: .open, payload: PropertyListBinaryCoding.encode(fields))
        case .opened(let handled):
            return Frame(kind: .opened, payload: PropertyListBinaryCoding.encode(["handled": .bool(handled)]))
        case .pairing(.request(let name, let commitment)):
            return Frame(kind: .pairRequest, payload: PropertyListBinaryCoding.encode(["name": .string(name), "commitment": .data(Data(commitment))]))
        case .pairing(.nonce(let name, let nonce)):
            return Frame(kind: .pairNonce, payload: PropertyListBinaryCoding.encode(["name": .string(name), "nonce": .data(Data(nonce))]))
        case .pairing(.reveal(let nonce)):
            return Frame(kind: .pairReveal, payload: PropertyListBinaryCoding.encode(["nonce": .data(Data(nonce))]))
        case .pairing(.confirm(let accepted)):
            return Frame(kind: .pairConfirm, payload: PropertyListBinaryCoding.encode(["accepted": .bool(accepted)]))
        case .keys(let key):
            return Frame(kind: .keys, payload: PropertyListBinaryCoding.encode(["advertisingKey": .data(Data(key))]))
        case .ping(let sequence):
            return Frame(kind: .ping, payload: PropertyListBinaryCoding.encode(["seq": .integer(Int64(sequence))]))
        case .pong(let sequence):
            return Frame(kind: .pong, payload: PropertyListBinaryCoding.encode(["seq": .integer(Int64(sequence))]))
        case .subscribe:
            return Frame(kind: .subscribe, payload: PropertyListBinaryCoding.encode([:]))
        case .goodbye:
            return Frame(kind: .goodbye, payload: PropertyListBinaryCoding.encode([:]))
        case .advertisement(let instanceName, let txtRecord):
            return Frame(kind: .advertisement, payload: PropertyListBinaryCoding.encode([
                "instanceName": .string(instanceName), "txtRecord": .data(Data(txtRecord)),
            ]))
        case .announce(let port, let instanceName, let txtRecord):
            return Frame(kind: .announce, payload: PropertyListBinaryCoding.encode([
                "port": .integer(Int64(port)), "instanceName": .string(instanceName), "txtRecord": .data(Data(txtRecord)),
            ]))
        case .clipboardFetch(let itemID):
            return Frame(kind: .clipboardFetch, payload: PropertyListBinaryCoding.encode(["itemID": .uuid(itemID)]))
        case .clipboardItem(let item):
            return Frame(kind: .clipboardItem, payload: PropertyListBinaryCoding.encode(item.propertyList))
        case .files(let message):
            return message.frame
        case .userInfo(let u):
            return Frame(kind: .userInfo, payload: PropertyListBinaryCoding.encode(u))
        case .searchRequest(let request):
            return Frame(kind: .searchRequest, payload: PropertyListBinaryCoding.encode(request.propertyList))
        case .searchResults(let results):
            return Frame(kind: .searchResults, payload: PeerSearchResults.payload(results, maxBytes: FrameLimits().maxFrameBytes))
        case .error(let code, let message):
            return Frame(kind: .error, payload: PropertyListBinaryCoding.encode([
                "code": .integer(Int64(code)), "message": .string(message),
            ]))
        }
    }

    /// Decodes a peer frame. Control frames are not peer messages.
    public init(frame: Frame) throws(FrameError) {
        let kind = frame.kind
        func malformed(_ reason: String) -> FrameError { .malformed(kind: kind, reason: reason) }
        // Stream frames carry raw bytes, not a property list.
        if kind == .streamData { self = .streamData(frame.payload); return }
        if kind == .streamEnd { self = .streamEnd; return }
        if FileTransferMessage.kinds.contains(kind) { self = .files(try FileTransferMessage(frame: frame)); return }
        let fields: UserInfo
        do { fields = try PropertyListBinaryCoding.decodeUserInfo(frame.payload) } catch { throw malformed(error.description) }
        switch kind {
        case .hello:
            guard case .string(PeerHello.protocolName)? = fields["protocol"] else { throw malformed("not a handoff hello") }
            guard case .array(let versionValues)? = fields["versions"], !versionValues.isEmpty,
                case .string(let agentID)? = fields["agentID"], case .string(let name)? = fields["name"]
            else { throw malformed("missing versions, agentID or name") }
            var versions: [Int] = []
            for v in versionValues {
                guard case .integer(let i) = v, i > 0, i < 1 << 16 else { throw malformed("invalid version") }
                versions.append(Int(i))
            }
            var multiplexing = false
            if case .bool(true)? = fields["multiplexing"] { multiplexing = true }
            var pushes = false
            if case .bool(true)? = fields["advertisementPush"] { pushes = true }
            var shared = false
            if case .bool(true)? = fields["sharedConnection"] { shared = true }
            self = .hello(PeerHello(versions: versions, agentID: agentID, name: name, multiplexing: multiplexing, pushesAdvertisements: pushes,
                                    sharedConnection: shared))
        case .fetch, .continued:
            guard case .uuid(let activityID)? = fields["activityID"], case .uuid(let continuationID)? = fields["continuationID"] else {
                throw malformed("missing activityID or continuationID")
            }
            let request = FetchRequest(activityID: activityID, continuationID: continuationID)
            self = kind == .fetch ? .fetch(request) : .continued(request)
        case .activity:
            var source: AppIdentity?
            if case .string(let bundleID)? = fields["sourceBundleID"], case .string(let teamID)? = fields["sourceTeamID"] {
                source = AppIdentity(bundleID: bundleID, teamID: teamID)
            }
            do { self = .activity(try Activity(propertyList: fields), source: source) } catch { throw malformed(error.description) }
        case .userInfo:
            self = .userInfo(fields)
        case .streamOpen:
            guard case .uuid(let activityID)? = fields["activityID"], case .uuid(let streamID)? = fields["streamID"] else {
                throw malformed("missing activityID or streamID")
            }
            self = .streamOpen(StreamRequest(activityID: activityID, streamID: streamID))
        case .streamAccepted:
            self = .streamAccepted
        case .open:
            guard case .string(let bundleID)? = fields["bundleID"], case .integer(let size)? = fields["fileSize"], size >= 0 else {
                throw malformed("missing bundleID or fileSize")
            }
            var request = OpenRequest(bundleID: bundleID, fileSize: Int(clamping: size))
            if case .url(let url)? = fields["url"] { request.url = url }
            if case .string(let name)? = fields["fileName"] { request.fileName = name }
            if case .string(let source)? = fields["sourceApplication"] { request.sourceApplication = source }
            request.annotation = fields["annotation"]
            if case .bool(true)? = fields["answersFirst"] { request.answersFirst = true }
            guard (request.url == nil) != (request.fileName == nil) else { throw malformed("needs exactly one of url and fileName") }
            self = .open(request)
        case .opened:
            guard case .bool(let handled)? = fields["handled"] else { throw malformed("missing handled") }
            self = .opened(handled: handled)
        case .pairRequest, .pairNonce:
            guard case .string(let name)? = fields["name"], name.utf8.count <= 255 else { throw malformed("missing name") }
            let key = kind == .pairRequest ? "commitment" : "nonce"
            guard case .data(let data)? = fields[key], data.count == 32 else { throw malformed("\(key) must be 32 bytes") }
            let bytes = Array(data)
            self = .pairing(kind == .pairRequest ? .request(name: name, commitment: bytes) : .nonce(name: name, nonce: bytes))
        case .pairReveal:
            guard case .data(let nonce)? = fields["nonce"], nonce.count == 32 else { throw malformed("nonce must be 32 bytes") }
            self = .pairing(.reveal(nonce: Array(nonce)))
        case .pairConfirm:
            guard case .bool(let accepted)? = fields["accepted"] else { throw malformed("missing accepted") }
            // A key here is refused: keys travel only after both sides confirmed.
            guard fields["advertisingKey"] == nil else { throw malformed("advertisingKey belongs in a keys frame after both sides confirmed") }
            self = .pairing(.confirm(accepted: accepted))
        case .keys:
            guard case .data(let key)? = fields["advertisingKey"], key.count == 32 else { throw malformed("advertisingKey must be 32 bytes") }
            self = .keys(advertisingKey: Array(key))
        case .ping, .pong:
            guard case .integer(let sequence)? = fields["seq"] else { throw malformed("missing seq") }
            self = kind == .ping ? .ping(sequence: Int(clamping: sequence)) : .pong(sequence: Int(clamping: sequence))
        case .subscribe:
            self = .subscribe
        case .goodbye:
            self = .goodbye
        case .advertisement, .announce:
            // A DNS-SD instance name is at most 63 bytes, a TXT record at most 64 KiB (one frame).
            guard case .string(let instanceName)? = fields["instanceName"], !instanceName.isEmpty, instanceName.utf8.count <= 63 else {
                throw malformed("instanceName must be 1 to 63 bytes")
            }
            guard case .data(let txtRecord)? = fields["txtRecord"], !txtRecord.isEmpty else { throw malformed("missing txtRecord") }
            guard kind == .announce else {
                self = .advertisement(instanceName: instanceName, txtRecord: Array(txtRecord))
                return
            }
            guard case .integer(let port)? = fields["port"], (1...65535).contains(port) else { throw malformed("port must be 1 to 65535") }
            self = .announce(port: Int(port), instanceName: instanceName, txtRecord: Array(txtRecord))
        case .searchRequest:
            self = .searchRequest(try PeerSearchRequest(fields: fields))
        case .searchResults:
            self = .searchResults(try PeerSearchResults.decode(fields))
        case .clipboardFetch:
            guard case .uuid(let itemID)? = fields["itemID"] else { throw malformed("missing itemID") }
            self = .clipboardFetch(itemID: itemID)
        case .clipboardItem:
            guard let item = ClipboardItemInfo(propertyList: fields) else { throw malformed("needs mimeType, size and sha256") }
            self = .clipboardItem(item)
        case .error:
            guard case .integer(let code)? = fields["code"], case .string(let message)? = fields["message"] else {
                throw malformed("missing code or message")
            }
            self = .error(code: Int(clamping: code), message: message)
        default:
            throw .unexpected(kind: kind, expecting: "a peer message")
        }
    }
}
