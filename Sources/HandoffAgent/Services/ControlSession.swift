import HandoffCore
import HandoffTransport
import HandoffTrust

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One connection on the local control socket (mode 0600): the CLI's or an app's requests, each
/// answered with a result or a coded error. Requests run concurrently and a response carries the
/// request's `requestID`, so an app can answer the agent's events while a request is pending.
/// After `registerApp` the connection also carries events to the app; when it closes, the app's
/// activities are resigned.
public enum ControlSession {
    ///
    /// Only processes of the agent's own user may use it: the socket is mode 0600 in a private
    /// directory, and the agent checks the connecting process's uid (SO_PEERCRED) as well. A
    /// process whose uid cannot be learnt is refused too (the check fails closed).
    public static func serve(_ connection: FrameServer.Connection, agent: Agent) async throws {
        if let error = refusal(peerUID: connection.peerUID) {
            try await connection.outbound.write(Frame(kind: .controlResponse, payload: ControlProtocol.responseJSON(.failure(error)).serializedBytes))
            await drainRefused(connection, agent: agent)
            return
        }
        var inbound = connection.inbound.makeAsyncIterator()
        guard let first = try await inbound.next() else { return }
        // A stream pair, a file send, a streamed open or a clipboard item's bytes take a
        // connection of their own.
        if let (_, body) = try? ControlProtocol.decodeRequest(first), let request = try? ControlRequest(json: body) {
            if request.startsStreamSession {
                if case .sendFiles(let peer, let offer) = request {
                    try await FileSendSession.serve(peer: peer, offer: offer, requestID: body["requestID"], connection: connection, agent: agent)
                } else if case .open(let open) = request {
                    try await OpenFileRelay.serve(open, requestID: body["requestID"], connection: connection, agent: agent)
                } else {
                    try await ContinuationStreamSession.serve(request, requestID: body["requestID"], connection: connection, agent: agent)
                }
                return
            }
            if request.startsByteStream {
                try await ClipboardControlSession.serve(request, requestID: body["requestID"], inbound: &inbound, outbound: connection.outbound, agent: agent)
                return
            }
        }
        let link = ControlLink(outbound: connection.outbound)
        do {
            try await withThrowingDiscardingTaskGroup { group in
                var next: Frame? = first
                while let frame = next {
                    group.addTask { await answer(frame, link: link, agent: agent) }
                    next = try await inbound.next()
                }
                // The client is gone: its watches end (the group waits for them).
                await link.endWatches(agent.events)
            }
        } catch {
            await link.endWatches(agent.events)
            await agent.controlConnectionClosed(link)
            throw error
        }
        await agent.controlConnectionClosed(link)
    }

    /// How long a refused connection stays open for its client's requests to be read (and
    /// dropped) before it is closed.
    static let refusedLinger: Duration = .seconds(1)

    /// Reads and drops what a refused client sends, until it closes or ``refusedLinger`` passes.
    /// Closing at once would race the client's first request: its write fails (EPIPE) if it comes
    /// after the close, and a Unix socket closed with unread data resets the connection, so the
    /// client could lose the refusal that explains why.
    private static func drainRefused(_ connection: FrameServer.Connection, agent: Agent) async {
        _ = await Deadline.watch(refusedLinger, on: agent.clock, onExpiry: { connection.close() }) {
            do { for try await _ in connection.inbound {} } catch {}
        }
    }

    /// Why a connecting process is refused (nil: it is of the agent's own uid). An unknown uid
    /// (`SO_PEERCRED` failed or is not supported) is refused: the check fails closed.
    static func refusal(peerUID: UInt32?, ownUID: UInt32 = getuid()) -> HandoffError? {
        guard peerUID != ownUID else { return nil }
        let who = peerUID.map { "processes of uid \($0)" } ?? "processes whose uid cannot be learnt (SO_PEERCRED failed)"
        return .connectionUnavailable("this agent belongs to uid \(ownUID) and refuses \(who); run your own handoffd (each user has one)")
    }

    /// Runs one request and sends its response (with its `requestID`).
    static func answer(_ frame: Frame, link: ControlLink, agent: Agent) async {
        let result: Result<JSONValue, HandoffError>
        var requestID: JSONValue?
        switch Result(catching: { () throws(HandoffError) in try ControlProtocol.decodeRequest(frame) }) {
        case .success(let (_, body)):
            requestID = body["requestID"]
            do throws(HandoffError) {
                let request = try ControlRequest(json: body)
                if request == .watch { return await watch(link: link, agent: agent, requestID: requestID) }
                result = await execute(request, agent: agent, link: link)
            } catch {
                result = .failure(error)
            }
        case .failure(let error):
            result = .failure(error)
        }
        await link.send(ControlProtocol.responseJSON(result, requestID: requestID))
    }

    /// `watch`: answers, then sends the agent's events on the connection until it closes. A
    /// client that falls ``AgentEventHub/bufferSize`` events behind is disconnected, so that it
    /// never misses one without knowing.
    static func watch(link: ControlLink, agent: Agent, requestID: JSONValue?) async {
        let subscription = agent.events.subscribe()
        await link.watching(subscription.id)
        await link.send(ControlProtocol.responseJSON(.success(WatchResult().json), requestID: requestID))
        for await event in subscription.events where event.isWatched {
            guard await link.send(event.json) else { break }
        }
        agent.events.unsubscribe(subscription.id)
        if subscription.overflowed {
            agent.logger.warning("closed a watch that fell \(AgentEventHub.bufferSize) events behind")
            await link.close()
        }
    }

    /// Runs one control request; the answer in its wire form.
    static func execute(_ request: ControlRequest, agent: Agent, link: ControlLink? = nil) async -> Result<JSONValue, HandoffError> {
        await perform(request, agent: agent, link: link).map(\.json)
    }

    /// Runs one control request.
    static func perform(_ request: ControlRequest, agent: Agent, link: ControlLink?) async -> Result<any ControlResult, HandoffError> {
        switch request {
        case .status: return .success(await agent.status())
        case .peers: return .success(await agent.peers())
        case .list: return .success(await agent.offered())
        case .publish(let activity):
            if activity.isExpired(at: agent.wallClock()) {
                return .failure(.handoffFailed("cannot publish: the activity's expirationDate has already passed"))
            }
            var owner: ActivityStore.Owner?
            if let link, let manifest = await link.manifest {
                if let refusal = manifest.publishRefusal(activity.activityType) { return .failure(.handoffFailed(refusal)) }
                owner = ActivityStore.Owner(identity: manifest.identity, connectionID: link.id)
            }
            do {
                let id = try await agent.publish(activity, owner: owner)
                await agent.saveForSearch(activity, bundleID: owner?.identity.bundleID)
                return .success(PublishResult(id: id))
            } catch { return .failure(error) }
        case .resign(let id):
            let requester = await link?.manifest == nil ? nil : link?.id
            do { try await agent.resign(id: id, by: requester) } catch { return .failure(error) }
            return .success(ResignResult(resigned: id))
        case .continueActivity(let id, let key):
            return await agent.continueActivity(id: id, idempotencyKey: key).asControlResult
        case .registerApp(let manifest):
            guard let link else { return .failure(.handoffFailed("registerApp needs a control connection")) }
            do {
                let options = try await agent.registerApp(manifest, link: link)
                return .success(RegisterAppResult(registered: manifest.identity.bundleID, launchOptions: options))
            } catch { return .failure(error) }
        case .open(let open):
            let source = await link?.manifest?.identity.bundleID ?? OpenRequest.commandLineSourceApplication
            switch open.target {
            case .url(let url):
                return await agent.open(OpenRequest(bundleID: open.bundleID, url: url, sourceApplication: source, annotation: open.annotation),
                                        file: [], onPeer: open.peer).asControlResult
            case .file(let name, let data):
                let request = OpenRequest(bundleID: open.bundleID, fileName: name, fileSize: data.count, sourceApplication: source,
                                          annotation: open.annotation)
                return await agent.open(request, file: data, onPeer: open.peer).asControlResult
            case .streamedFile:
                return .failure(.handoffFailed("open with a streamed file must be the first request on a connection of its own"))
            }
        case .pair(let target):
            guard let link else { return .failure(.handoffFailed("pair needs a control connection")) }
            switch target {
            case .accept: return await agent.acceptPairing(link: link).asControlResult
            case .peer(let peer): return await agent.pair(with: peer, link: link).asControlResult
            }
        case .pairable:
            return .success(await agent.pairableDevices())
        case .faults(let set, let clear):
            return await agent.changeFaults(set: set, clear: clear).asControlResult
        case .trustList:
            return .success(await agent.trustedDevices())
        case .trustAdd(let text, let name, let addresses):
            do { return .success(try await agent.trustAdd(try deviceID(text), name: name, addresses: addresses)) } catch { return .failure(error) }
        case .trustRemove(let text):
            do { return .success(try await agent.trustRemove(try deviceID(text))) } catch { return .failure(error) }
        case .reply(let replyID, let reply):
            do { try await agent.resolveReply(replyID, with: reply, from: link?.id) } catch { return .failure(error) }
            return .success(EmptyResult())
        case .setPaused(let paused):
            do { return .success(try await agent.setPaused(paused)) } catch { return .failure(error) }
        case .diagnose:
            return .success(await agent.diagnose())
        case .search(let query, let devices, let limit):
            return await agent.search(query, devices: devices, limit: limit).asControlResult
        case .deleteSaved(let which):
            return await agent.deleteSaved(which, byApp: await link?.manifest?.identity.bundleID).asControlResult
        case .link(let source):
            return await agent.link(to: source).asControlResult
        case .continueLink(let text):
            return await agent.continueLink(text).asControlResult
        case .watch:
            return .failure(.handoffFailed("watch needs a control connection"))
        case .openStreams, .acceptStreams, .copy, .paste, .sendFiles:
            return .failure(.handoffFailed("\(request.command) must be the first request on a connection of its own"))
        }
    }

    /// A device ID as `handoff status` prints it; an error says what is wrong with it.
    private static func deviceID(_ text: String) throws(HandoffError) -> DeviceID {
        do { return try DeviceID(parsing: text) } catch { throw .handoffFailed("\(error)") }
    }
}

extension Result where Success: ControlResult {
    /// The same outcome, as any command's answer.
    fileprivate var asControlResult: Result<any ControlResult, Failure> { map { $0 } }
}
