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
            return
        }
        var inbound = connection.inbound.makeAsyncIterator()
        guard let first = try await inbound.next() else { return }
        if let (command, body) = try? ControlProtocol.decodeRequest(first), command == "openStreams" || command == "acceptStreams" {
            try await ContinuationStreamSession.serve(command, body, connection: connection, agent: agent)
            return
        }
        let link = ControlLink(outbound: connection.outbound)
        do {
            try await withThrowingDiscardingTaskGroup { group in
                var next: Frame? = first
                while let frame = next {
                    group.addTask { await answer(frame, link: link, agent: agent) }
                    next = try await inbound.next()
                }
            }
        } catch {
            await agent.controlConnectionClosed(link)
            throw error
        }
        await agent.controlConnectionClosed(link)
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
        case .success(let (command, body)):
            requestID = body["requestID"]
            result = await execute(command, body, agent: agent, link: link)
        case .failure(let error):
            result = .failure(error)
        }
        await link.send(ControlProtocol.responseJSON(result, requestID: requestID))
    }

    /// Runs one control command.
    static func execute(_ command: String, _ body: JSONValue, agent: Agent, link: ControlLink? = nil) async -> Result<JSONValue, HandoffError> {
        switch command {
        case "status": return .success(await agent.statusJSON())
        case "peers": return .success(await agent.peersJSON())
        case "list": return .success(await agent.listJSON())
        case "publish":
            guard let activityJSON = body["activity"] else { return .failure(.handoffFailed("publish needs an \"activity\" object")) }
            let activity: Activity
            do { activity = try Activity(json: activityJSON, defaultID: UUID()) } catch {
                return .failure(.handoffFailed("cannot publish: \(error)"))
            }
            if activity.isExpired(at: Date()) {
                return .failure(.handoffFailed("cannot publish: the activity's expirationDate has already passed"))
            }
            var owner: ActivityStore.Owner?
            if let link, let manifest = await link.manifest {
                owner = ActivityStore.Owner(identity: manifest.identity, connectionID: link.id)
            }
            do {
                let id = try await agent.publish(activity, owner: owner)
                return .success(.object(["id": .string(id.uuidString)]))
            } catch { return .failure(error) }
        case "resign":
            guard let id = body["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                return .failure(.handoffFailed("resign needs \"id\", an activity UUID as printed by publish"))
            }
            let requester = await link?.manifest == nil ? nil : link?.id
            do { try await agent.resign(id: id, by: requester) } catch { return .failure(error) }
            return .success(.object(["resigned": .string(id.uuidString)]))
        case "continue":
            guard let id = body["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                return .failure(.handoffFailed("continue needs \"id\", an activity UUID as printed by `handoff list`"))
            }
            var key: String?
            if let value = body["idempotencyKey"], value != .null {
                guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= 200 else {
                    return .failure(.handoffFailed("continue: \"idempotencyKey\" must be a string of 1 to 200 bytes, e.g. a UUID; reuse it only to retry the same continuation"))
                }
                key = text
            }
            return await agent.continueActivity(id: id, idempotencyKey: key)
        case "registerApp":
            guard let link else { return .failure(.handoffFailed("registerApp needs a control connection")) }
            let manifest: AppManifest
            do { manifest = try AppManifest(json: body["app"] ?? .null) } catch { return .failure(.handoffFailed("registerApp: \(error)")) }
            do { try await agent.registerApp(manifest, link: link) } catch { return .failure(error) }
            return .success(.object(["registered": .string(manifest.identity.bundleID)]))
        case "open":
            guard let peer = body["peer"]?.stringValue, let bundleID = body["app"]?.stringValue else {
                return .failure(.handoffFailed("open needs \"peer\" and \"app\" (a bundle ID)"))
            }
            var annotation: PropertyListValue?
            if let json = body["annotation"] {
                do { annotation = try PropertyListValue(json: json) } catch { return .failure(.handoffFailed("open: annotation: \(error)")) }
            }
            let source = await link?.manifest?.identity.bundleID
            if let url = body["url"]?.stringValue {
                guard let parsed = URL(string: url), parsed.scheme != nil else { return .failure(.handoffFailed("open: \(url) is not an absolute URL")) }
                return await agent.open(OpenRequest(bundleID: bundleID, url: parsed, sourceApplication: source, annotation: annotation), file: [], onPeer: peer)
            }
            guard let file = body["file"], let name = file["name"]?.stringValue, let data = file["data"]?.stringValue.flatMap({ Data(base64Encoded: $0) }) else {
                return .failure(.handoffFailed("open needs \"url\" or \"file\": {\"name\", \"data\" (base64)}"))
            }
            let request = OpenRequest(bundleID: bundleID, fileName: name, fileSize: data.count, sourceApplication: source, annotation: annotation)
            return await agent.open(request, file: Array(data), onPeer: peer)
        case "pair":
            guard let link else { return .failure(.handoffFailed("pair needs a control connection")) }
            if body["accept"]?.boolValue == true { return await agent.acceptPairing(link: link) }
            guard let target = body["peer"]?.stringValue, !target.isEmpty else {
                return .failure(.handoffFailed("pair needs \"peer\" (the other device's name as its `handoff pair --accept` shows it, or HOST:PORT) or \"accept\": true"))
            }
            return await agent.pair(with: target, link: link)
        case "pairable":
            return .success(await agent.pairableJSON())
        case "faults":
            return await agent.changeFaults(set: body["set"], clear: body["clear"])
        case "trustList":
            return .success(await agent.trustJSON())
        case "trustAdd", "trustRemove":
            guard let text = body["deviceID"]?.stringValue else { return .failure(.handoffFailed("\(command) needs \"deviceID\", as `handoff status` prints it")) }
            let id: DeviceID
            do { id = try DeviceID(parsing: text) } catch { return .failure(.handoffFailed("\(error)")) }
            do {
                if command == "trustAdd" { return .success(try await agent.trustAdd(id, name: body["name"]?.stringValue)) }
                return .success(try await agent.trustRemove(id))
            } catch { return .failure(error) }
        case "reply":
            guard let replyID = body["replyID"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                return .failure(.handoffFailed("reply needs \"replyID\" from the event it answers"))
            }
            do { try await agent.resolveReply(replyID, with: body["result"] ?? .null, from: link?.id) } catch { return .failure(error) }
            return .success(.object([:]))
        default:
            return .failure(.handoffFailed(
                "unknown command \"\(command)\"; this agent knows status, peers, list, publish, resign, continue, open, pair, pairable, faults, trustList, trustAdd, trustRemove, registerApp and reply"))
        }
    }
}
