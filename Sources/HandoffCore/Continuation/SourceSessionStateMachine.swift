#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The source side of a peer connection, as a pure state machine: version handshake, then any
/// number of fetches, each answered with the activity and its userInfo or with a coded error.
public struct SourceSessionStateMachine: Sendable {
    public enum Action: Sendable, Equatable {
        /// Send these frames and keep reading.
        case send([Frame])
        /// Look the activity up, then call ``lookedUp(_:source:request:now:)``.
        case lookUp(FetchRequest)
        /// A fetch on a multiplexed connection: look the activity up beside the others in flight
        /// (within the connection's cap), send ``answer(_:source:request:now:)`` as `reply` frames
        /// tagged `id`, and keep reading meanwhile.
        case lookUpTagged(id: UInt32, FetchRequest)
        /// The peer continued an activity of ours: tell its app, and keep reading (the peer may
        /// keep the connection for its next fetch).
        case notifyContinued(FetchRequest)
        /// The peer wants continuation streams: pair this connection with the activity's app; the
        /// connection carries stream frames from now on.
        case openStreams(StreamRequest)
        /// The peer sends a URL or a file to one of our apps; for a file, stream frames follow.
        case receiveOpen(OpenRequest)
        /// The peer sends files (`handoff send`): file frames and their bytes follow.
        case receiveFiles(FileOffer)
        /// The peer starts pairing: the connection carries the pairing exchange from now on.
        case pair(name: String, commitment: [UInt8])
        /// A paired peer sent its advertising key: record it and answer with ours.
        case exchangeKeys([UInt8])
        /// A paired peer knows this device by address, not over DNS-SD: send it the
        /// advertisement now and on every change, for as long as the connection lasts.
        case subscribeAdvertisements
        /// A paired peer started and is back: take its advertisement as found at the
        /// connection's address and `port`, and keep reading.
        case announced(port: Int, instanceName: String, txtRecord: [UInt8])
        /// A paired peer stops: forget what it announced, and close.
        case saidGoodbye
        /// A paired peer searches this device's saved activities: answer with `searchResults` (or
        /// an error) and keep reading.
        case search(PeerSearchRequest)
        /// A paired peer asks for the contents of our clipboard item: send them, then close.
        case serveClipboard(itemID: UUID)
        /// Send these frames (maybe none), then close the connection.
        case sendAndClose([Frame], reason: String)
        /// On a shared connection: a frame answering this side's own liveness, subscription or
        /// fetches on it (`pong`, `reply`, `advertisement`): hand it to the side's watcher.
        case forwardToWatcher(Frame)
        /// On a shared connection: the peer's new advertising key, recorded and not answered
        /// (both sides announce their own on it, so an answer would be taken for an announcement).
        case takeKeys([UInt8])
    }

    private enum State: Sendable {
        case awaitingHello
        case ready(peer: PeerHello)
        case lookingUp(peer: PeerHello)
        case closed
    }

    private var state: State = .awaitingHello
    /// Whether the peer subscribed to the advertisement on this connection (once only).
    private var subscribed = false
    /// Whether the peer announced itself on this connection (once only).
    private var announced = false
    /// Whether the hellos agreed on multiplexed requests.
    public private(set) var multiplexing = false
    /// Whether the hellos agreed to share the connection (``PeerHello/sharedConnection``): the
    /// peer's answers to this side's own requests on it come through here too.
    public private(set) var shared = false
    private let hello: PeerHello
    private let agentName: String

    public init(hello: PeerHello) {
        self.hello = hello
        self.agentName = hello.name
    }

    /// The source side of a shared connection this side dialled: the hellos are exchanged
    /// already (this side's went first), both agreed to multiplex and share, and `peer` is the
    /// peer's hello.
    public init(hello: PeerHello, sharingWith peer: PeerHello) {
        self.init(hello: hello)
        state = .ready(peer: peer)
        multiplexing = true
        shared = true
    }

    /// On a shared connection, the frames that answer the reader's own pings, fetches and
    /// subscription; every other frame is the peer's request to the reader's source side.
    public static let watcherKinds: [FrameKind] = [.pong, .reply, .advertisement]

    /// Whether two hellos agree to share their connection: both say so, and both multiplex.
    public static func agreeToShare(_ ours: PeerHello, _ theirs: PeerHello) -> Bool {
        ours.sharedConnection && theirs.sharedConnection && ours.multiplexing && theirs.multiplexing
    }

    /// The peer's hello, once received.
    public var peer: PeerHello? {
        switch state {
        case .ready(let p), .lookingUp(let p): p
        default: nil
        }
    }

    public mutating func received(_ frame: Frame) -> Action {
        if shared, case .ready = state, Self.watcherKinds.contains(frame.kind) { return .forwardToWatcher(frame) }
        if frame.kind == .request { return receivedTagged(frame) }
        let message: PeerMessage
        do { message = try PeerMessage(frame: frame) } catch { return close("malformed frame: \(error)") }
        switch (state, message) {
        case (.awaitingHello, .hello(let theirs)):
            guard let version = hello.negotiatedVersion(with: theirs) else {
                return close("no common protocol version (peer \(theirs.versions), ours \(hello.versions))", code: .userActivityConnectionUnavailable,
                             message: "\(agentName) speaks protocol versions \(hello.versions); update the older agent")
            }
            state = .ready(peer: theirs)
            var answer = hello
            answer.versions = [version]
            answer.multiplexing = hello.multiplexing && theirs.multiplexing
            multiplexing = answer.multiplexing
            // Said only to a watcher that knows the field (an old one subscribes by address only).
            answer.pushesAdvertisements = hello.pushesAdvertisements && theirs.pushesAdvertisements
            answer.sharedConnection = Self.agreeToShare(hello, theirs)
            shared = answer.sharedConnection
            return .send([PeerMessage.hello(answer).frame])
        case (.ready(let peer), .fetch(let request)):
            state = .lookingUp(peer: peer)
            return .lookUp(request)
        case (.ready, .continued(let request)):
            return .notifyContinued(request)
        case (.ready, .streamOpen(let request)):
            state = .closed
            return .openStreams(request)
        case (.ready, .open(let request)):
            state = .closed
            return .receiveOpen(request)
        case (.ready, .files(.offer(let offer))):
            state = .closed
            return .receiveFiles(offer)
        case (.ready, .pairing(.request(let name, let commitment))):
            state = .closed
            return .pair(name: name, commitment: commitment)
        case (.ready, .clipboardFetch(let itemID)):
            state = .closed
            return .serveClipboard(itemID: itemID)
        case (.ready, .keys(let key)):
            return shared ? .takeKeys(key) : .exchangeKeys(key)
        case (.ready, .ping(let sequence)):
            // Liveness (docs/PROTOCOL.md): answered at once, the connection stays open.
            return .send([PeerMessage.pong(sequence: sequence).frame])
        case (.ready, .subscribe):
            guard !subscribed else { return close("a second subscribe on one connection") }
            subscribed = true
            return .subscribeAdvertisements
        case (.ready, .announce(let port, let instanceName, let txtRecord)):
            guard !announced else { return close("a second announce on one connection") }
            announced = true
            return .announced(port: port, instanceName: instanceName, txtRecord: txtRecord)
        case (.ready, .goodbye):
            state = .closed
            return .saidGoodbye
        case (.ready, .searchRequest(let request)):
            return .search(request)
        default:
            return close("unexpected \(frame.kind) frame")
        }
    }

    /// The result of a lookup: the held activity, or nil when there is none by that ID.
    public mutating func lookedUp(_ activity: Activity?, source: AppIdentity? = nil, request: FetchRequest, now: Date) -> Action {
        guard case .lookingUp(let peer) = state else { return close("lookup finished in the wrong state") }
        state = .ready(peer: peer)
        return .send(answer(activity, source: source, request: request, now: now))
    }

    /// The answer to a fetch: the activity's fields and its userInfo, or the coded error when
    /// there is none by that ID (nil) or it is no longer offered.
    public func answer(_ activity: Activity?, source: AppIdentity? = nil, request: FetchRequest, now: Date) -> [Frame] {
        guard let activity else {
            return [PeerMessage.error(code: HandoffError.Code.userActivityHandoffFailed.rawValue,
                message: "activity \(request.activityID) is no longer offered by \(agentName): it was resigned or its agent restarted").frame]
        }
        guard activity.isOffered(at: now) else {
            let why = activity.isExpired(at: now) ? "it expired" : "it is not eligible for handoff"
            return [PeerMessage.error(code: HandoffError.Code.userActivityHandoffFailed.rawValue,
                message: "activity \(activity.activityType) on \(agentName) is no longer offered: \(why)").frame]
        }
        var fields = activity
        fields.userInfo = [:]
        return [PeerMessage.activity(fields, source: source).frame, PeerMessage.userInfo(activity.transferredUserInfo).frame]
    }

    /// A `request` frame: a fetch on a connection whose hellos agreed on multiplexing.
    private mutating func receivedTagged(_ frame: Frame) -> Action {
        guard case .ready = state, multiplexing else { return close("unexpected request frame") }
        let tagged: TaggedFrame
        let message: PeerMessage
        do {
            tagged = try TaggedFrame(unwrapping: frame)
            message = try PeerMessage(frame: tagged.frame)
        } catch {
            return close("malformed frame: \(error)")
        }
        guard case .fetch(let request) = message else { return close("unexpected \(tagged.frame.kind) frame in a request") }
        return .lookUpTagged(id: tagged.id, request)
    }

    /// The activity could not be prepared (its app did not save it in time, say): answer the
    /// fetch with the coded error and stay ready for more.
    public mutating func lookUpFailed(_ error: HandoffError) -> Action {
        guard case .lookingUp(let peer) = state else { return close("lookup failed in the wrong state") }
        state = .ready(peer: peer)
        return .send([PeerMessage.error(code: error.code.rawValue, message: error.message).frame])
    }

    /// A frame was refused or the connection failed.
    public mutating func receiveFailed(_ error: any Error) -> Action { close("\(error)") }

    private mutating func close(_ reason: String, code: HandoffError.Code? = nil, message: String? = nil) -> Action {
        state = .closed
        if let code, let message { return .sendAndClose([PeerMessage.error(code: code.rawValue, message: message).frame], reason: reason) }
        return .sendAndClose([], reason: reason)
    }
}
