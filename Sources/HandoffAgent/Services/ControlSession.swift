import HandoffCore
import HandoffTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One connection on the local control socket (mode 0600): the CLI's or an app's requests,
/// each answered with a result or a coded error.
public enum ControlSession {
    public static func serve(_ connection: FrameServer.Connection, agent: Agent) async throws {
        for try await frame in connection.inbound {
            let result: Result<JSONValue, HandoffError>
            switch Result(catching: { () throws(HandoffError) in try ControlProtocol.decodeRequest(frame) }) {
            case .success(let (command, body)): result = await execute(command, body, agent: agent)
            case .failure(let error): result = .failure(error)
            }
            try await connection.outbound.write(ControlProtocol.response(result))
        }
    }

    /// Runs one control command.
    static func execute(_ command: String, _ body: JSONValue, agent: Agent) async -> Result<JSONValue, HandoffError> {
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
            let id = await agent.publish(activity)
            return .success(.object(["id": .string(id.uuidString)]))
        case "resign":
            guard let id = body["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                return .failure(.handoffFailed("resign needs \"id\", an activity UUID as printed by publish"))
            }
            do { try await agent.resign(id: id) } catch { return .failure(error) }
            return .success(.object(["resigned": .string(id.uuidString)]))
        case "continue":
            guard let id = body["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
                return .failure(.handoffFailed("continue needs \"id\", an activity UUID as printed by `handoff list`"))
            }
            return await agent.continueActivity(id: id)
        default:
            return .failure(.handoffFailed("unknown command \"\(command)\"; this agent knows status, peers, list, publish, resign and continue"))
        }
    }
}
