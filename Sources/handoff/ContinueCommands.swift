import ArgumentParser
import HandoffCore
import HandoffTransport

import Foundation

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the activities your paired devices offer, newest first.",
        discussion: "Short IDs are unique prefixes: `handoff continue` takes them. --json gives the full id and offeredAt.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        guard let offered = try await options.call(.list, as: [OfferedActivity].self) else { return }
        if offered.isEmpty { say("no activities on offer (`handoff peers` shows the devices found)") }
        let rows = OfferSelection.newestFirst(offered)
        let short = OfferSelection.shortIDs(rows)
        let now = Date()
        for row in rows {
            let age = OfferSelection.age(of: row.offeredAt, now: now)
            say("\(short[row.id] ?? row.id.uuidString)  \(age.padding(toLength: 9, withPad: " ", startingAt: 0))  \(row.peer)  \(row.activityType)  \(row.title ?? "")")
        }
    }
}

struct Continue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Continue a peer's activity on this host: fetch it and run the local handler.",
        discussion: """
            With no ID, continues the newest activity on offer from any reachable paired device; with --from PEER, the \
            newest from that device. An ID may be shortened to a unique prefix of at least 4 characters, as `handoff list` \
            shows it; an ambiguous prefix exits 64 and lists the candidates. \
            Exits 0 when a handler (or the URL opener) took the activity, 1 with an NSUserActivity error code otherwise. \
            To retry safely after a lost reply, give the retry the same --idempotency-key: the agent answers it with the \
            first attempt's result ("replayed") and runs no handler again. \
            Given a link (\(HandoffLink.prefix)..., as `handoff link` prints it), gives its content to the local app \
            that declares its type (started from its manifest if needed), else opens its webpageURL through the \
            URL opener; a link never runs a configured handler.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The activity's ID or a unique prefix of it, as `handoff list` shows it (default: the newest); or a link from `handoff link`.",
                                  valueName: "id|link"))
    var id: String?
    @Option(name: .long, help: ArgumentHelp("Only activities this device offers (its name, as `handoff list` shows it).", valueName: "peer"))
    var from: String?
    @Option(name: .customLong("idempotency-key"),
            help: ArgumentHelp("Continue at most once for this key (e.g. a UUID); a retry with it runs no handler again.", valueName: "key"))
    var idempotencyKey: String?

    func validate() throws {
        if let idempotencyKey {
            do { try ControlRequest.checkIdempotencyKey(idempotencyKey) } catch {
                throw ValidationError("--idempotency-key must be 1 to \(ControlRequest.maximumIdempotencyKeyBytes) bytes, e.g. a UUID")
            }
        }
        if let from, from.isEmpty { throw ValidationError("--from needs a device's name, as `handoff list` shows it") }
        if let id, HandoffLink.looksLikeLink(id), from != nil || idempotencyKey != nil {
            throw ValidationError("a link continues alone: --from and --idempotency-key are for a paired device's activities")
        }
    }

    func run() async throws {
        if let id, HandoffLink.looksLikeLink(id) { return try await continueLink(id) }
        let target = try await chosenActivity()
        let request = ControlRequest.continueActivity(id: target, idempotencyKey: idempotencyKey)
        guard let result = try await options.call(request, as: ContinueResult.self, prettyJSON: false) else { return }
        let replayed = result.replayed ? "; a retry: answered from the first attempt" : ""
        say("continued \(result.activityType) from \(result.peer) (taken by \(result.by)\(replayed))")
    }

    /// Continues a link's content here (the agent reads the link strictly).
    private func continueLink(_ text: String) async throws {
        guard let result = try await options.call(.continueLink(text), as: ContinueResult.self, prettyJSON: false) else { return }
        let taker = result.app.map { "the app \($0)" } ?? result.by
        say("continued \(result.activityType) from a link (taken by \(taker))")
    }

    /// The activity meant: a whole ID as given (the agent says why it is not on offer, if it is
    /// not), else chosen from `list` (``OfferSelection``).
    private func chosenActivity() async throws -> UUID {
        if let id, from == nil, let whole = UUID(uuidString: id) { return whole }
        let offered = OfferedActivity.array(from: try await options.call(.list))
        switch OfferSelection.select(prefix: id, from: from, in: offered) {
        case .success(let chosen): return chosen.id
        case .failure(let problem):
            if options.json {
                var body: [String: JSONValue] = ["error": ControlProtocol.errorJSON(.handoffFailed(problem.description))]
                if case .ambiguous(_, let candidates) = problem { body["candidates"] = candidates.json }
                print(JSONValue.object(body).serialized)
            } else {
                // Line by line: a peer's title must not start a line of its own.
                let lines = problem.description.split(separator: "\n", omittingEmptySubsequences: false).map { UntrustedText.escaped(String($0)) }
                FileHandle.standardError.write(Data(("handoff: " + lines.joined(separator: "\n") + "\n").utf8))
            }
            throw ExitCode(problem.isUsageError ? 64 : 1)
        }
    }
}

extension OfferedActivity {
    /// `list`'s answer.
    static func array(from json: JSONValue) -> [OfferedActivity] { [OfferedActivity](json: json) }
}
