import ArgumentParser
import HandoffCore
import HandoffTransport

import Foundation

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print what the agent learns as it happens, until interrupted.",
        discussion: """
            Events: activityOffered, activityWithdrawn, peerReachable, peerUnreachable, continued, continueFailed, \
            paused, resumed. With --json, one JSON object per line, each with "event" and "time" (ISO 8601) \
            (docs/PROTOCOL.md, "Watching"). Exits 1 when the agent cannot be reached or goes away.
            """)
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        do {
            for try await event in AgentEventStream(socketPath: options.client.socketPath) {
                // Each event is a line of its own, written at once (unbuffered), also into a pipe.
                let line = options.json ? event.json.serialized : UntrustedText.escaped(Self.line(event))
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        } catch let error as HandoffError {
            options.report(error)
            throw ExitCode(1)
        }
    }

    /// An event as a person reads it: local time, what happened, the activity's short ID.
    static func line(_ event: AgentEvent) -> String {
        let time = event.time.formatted(Date.ISO8601FormatStyle(timeZone: .current).time(includingFractionalSeconds: false))
        let short = event.activityID.map { String($0.uuidString.lowercased().prefix(OfferSelection.shortIDLength)) } ?? ""
        let what: String
        switch event.kind {
        case .activityOffered(let offer): what = "offered    \(short)  \(offer.title ?? offer.activityType) (\(offer.activityType)) from \(offer.peer)"
        case .activityWithdrawn(_, let peer): what = "withdrawn  \(short)  by \(peer)"
        case .peerReachable(let peer): what = "reachable  \(peer)"
        case .peerUnreachable(let peer): what = "gone       \(peer)"
        case .continuing(_, let peer, let appNotifies):
            what = "continuing \(short)  from \(peer)\(appNotifies ? ", the app shows its progress" : "")"
        case .continued(_, let peer, let by): what = "continued  \(short)  from \(peer), taken by \(by)"
        case .continueFailed(_, let error): what = "failed     \(short)  \(error.description)"
        case .paused: what = "paused     this host advertises nothing until `handoff resume`"
        case .resumed: what = "resumed"
        case .filesReceived(let received): what = "received   \(received.summary) in \(received.directory)"
        }
        return "\(time)  \(what)"
    }
}

struct Pause: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop handing off from this host: advertise no activity and show no notifications, until `handoff resume`.",
        discussion: "Like Apple's \"Allow Handoff\" switch turned off. It outlasts restarts; `handoff status` shows it.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        guard let result = try await options.call(.setPaused(true), as: PauseResult.self) else { return }
        say(result.changed ? "handoff paused: this host advertises no activity until `handoff resume`" : "handoff was already paused")
    }
}

struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Hand off from this host again after `handoff pause`.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        guard let result = try await options.call(.setPaused(false), as: PauseResult.self) else { return }
        say(result.changed ? "handoff resumed" : "handoff was not paused")
    }
}
