import ArgumentParser
import HandoffCore
import HandoffTransport

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `handoff`: the command line for the local agent.
@main
struct HandoffCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff",
        abstract: "Publish activities on this host and continue your other hosts' activities.",
        discussion: """
            Talks to the local handoffd over its control socket: --socket, else HANDOFF_SOCKET, else \
            $XDG_RUNTIME_DIR/handoff/handoffd.sock (or /tmp/handoff-UID/handoffd.sock).
            Exit status: 0 on success, 1 when the agent reports an error (the code is printed), 64 on bad usage.
            """,
        version: "handoff \(HandoffVersion.description)",
        subcommands: [Status.self, Peers.self, List.self, Watch.self, Publish.self, Resign.self, Continue.self, Open.self, Send.self, Pause.self, Resume.self,
                      Pair.self, Trust.self, Doctor.self, Fault.self, BrowserHost.self, Search.self, Saved.self, Link.self, Copy.self, Paste.self])

    /// `--socket` and `--json` are accepted before or after any subcommand's name, at any depth:
    /// the root parses them wherever they stand, and every subcommand's `@OptionGroup` of
    /// ``GlobalOptions`` gets the root's values (argument-parser hands a parent's option group to
    /// its children).
    @OptionGroup var options: GlobalOptions
}

/// Options every command takes, before or after its name (`handoff --socket P trust add ID`,
/// `handoff trust add ID --socket P`).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The agent's control socket (default: HANDOFF_SOCKET or the agent's default).", valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    /// The agent's control socket.
    var socketPath: String {
        let environment = ProcessInfo.processInfo.environment
        return socket ?? environment["HANDOFF_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? DefaultPaths.controlSocket(environment: environment)
    }

    var client: ControlClient { ControlClient(socketPath: socketPath) }

    /// Calls the agent; on failure prints the error (JSON with --json) and exits 1.
    func call(_ request: ControlRequest) async throws -> JSONValue {
        switch await client.call(request) {
        case .success(let value): return value
        case .failure(let error):
            report(error)
            throw ExitCode(1)
        }
    }

    /// Calls the agent and reads its answer as `R`; with --json, prints the answer as the agent
    /// sent it and returns nil. On failure prints the error and exits 1.
    func call<R: ControlResult>(_ request: ControlRequest, as: R.Type, prettyJSON: Bool = true) async throws -> R? {
        let answer = try await call(request)
        if json {
            print(prettyJSON ? answer.prettySerialized : answer.serialized)
            return nil
        }
        return R(json: answer)
    }

    /// Prints an error: JSON with --json, else a line on standard error.
    func report(_ error: HandoffError) {
        if json {
            print(JSONValue.object(["error": ControlProtocol.errorJSON(error)]).serialized)
        } else {
            FileHandle.standardError.write(Data("handoff: \(UntrustedText.escaped(error.description))\n".utf8))
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the local agent: name, port, held activities.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        guard let status = try await options.call(.status, as: AgentStatus.self) else { return }
        say("agent \(status.registeredName ?? status.name) (id \(status.agentID)) on port \(status.port), \(status.peers) peer(s), \(status.pairedDevices) paired device(s)")
        say("device ID \(status.deviceID)")
        if status.paused { say("handoff is paused: this host advertises no activity and shows no notifications (`handoff resume`)") }
        if status.activities.isEmpty { say("no activities published") }
        for activity in status.activities {
            let marker = activity.id == status.current ? "*" : " "
            say("\(marker) \(activity.id.uuidString)  \(activity.activityType)  \(activity.title ?? "")")
        }
    }
}

struct Peers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the peer agents discovered on the LAN.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        guard let peers = try await options.call(.peers, as: [PeerSummary].self) else { return }
        if peers.isEmpty { say("no peers found (is handoffd running on your other hosts, on this LAN?)") }
        for peer in peers {
            let offers = peer.current.map { "offers \($0.uuidString)" } ?? "no activity"
            // Liveness: a peer that stopped answering still has a DNS-SD record, but nothing on offer.
            let state = peer.reachable ? offers : "unreachable"
            // A peer reached at its stored address, not seen over DNS-SD, says so.
            let via = peer.via == "dns-sd" ? "" : " (via \(peer.via))"
            say("\(peer.name)  \(peer.addresses.first ?? peer.host):\(peer.port)\(via)  \(state)")
        }
    }
}

struct Publish: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make an activity current on this host; the agent holds it until `handoff resign ID`.",
        discussion: """
            --user-info takes a JSON object. Numbers without a fraction are integers, others doubles. \
            Other property-list types are tagged: {"$data": "<base64>"}, {"$date": "2026-11-22T10:00:00Z"}, \
            {"$url": "https://..."}, {"$uuid": "..."}.
            """)
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("The activity type, reverse-DNS (com.example.notes.edit).", valueName: "type"))
    var type: String
    @Option(name: .long, help: "A title a person can read.")
    var title: String?
    @Option(name: .customLong("user-info"), help: ArgumentHelp("userInfo as a JSON object.", valueName: "json"))
    var userInfo: String?
    @Option(name: .customLong("webpage-url"), help: ArgumentHelp("Opened in a browser when no handler takes the activity.", valueName: "url"))
    var webpageURL: String?
    @Option(name: .customLong("required-keys"), help: ArgumentHelp("Only these userInfo keys are transferred (comma-separated).", valueName: "a,b"))
    var requiredKeys: String?
    @Option(name: .customLong("expires-in"), help: ArgumentHelp("Withdraw the activity after this many seconds.", valueName: "seconds"))
    var expiresIn: Double?
    @Flag(name: .long, help: "Save it for `handoff search` (isEligibleForSearch); it stays findable after it is resigned, until it expires or is deleted.")
    var searchable = false
    @Option(name: .long, help: ArgumentHelp("Keywords for search (comma-separated).", valueName: "a,b"))
    var keywords: String?
    @Option(name: .customLong("persistent-id"), help: ArgumentHelp("A stable identifier, to replace or delete the saved activity later.", valueName: "id"))
    var persistentID: String?

    func validate() throws {
        do { _ = try ActivityType(validating: type) } catch { throw ValidationError("--type: \(error)") }
        if let expiresIn, !(expiresIn > 0) { throw ValidationError("--expires-in must be a positive number of seconds") }
        if let webpageURL, URL(string: webpageURL)?.scheme == nil { throw ValidationError("--webpage-url must be an absolute URL such as https://example.com/page") }
        if persistentID?.isEmpty == true { throw ValidationError("--persistent-id may not be empty") }
    }

    func run() async throws {
        var activity = Activity(activityType: try ActivityType(validating: type), title: title)
        if let userInfo {
            do {
                activity.userInfo = try UserInfo(userInfoJSON: try JSONValue(parsing: userInfo))
            } catch {
                throw ValidationError("--user-info: \(error)")
            }
        }
        activity.webpageURL = webpageURL.flatMap(URL.init(string:))
        if let requiredKeys {
            activity.requiredUserInfoKeys = Set(requiredKeys.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        if let expiresIn { activity.expirationDate = Date().addingTimeInterval(expiresIn) }
        activity.isEligibleForSearch = searchable
        activity.keywords = Set((keywords ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        activity.persistentIdentifier = persistentID
        guard let result = try await options.call(.publish(activity), as: PublishResult.self, prettyJSON: false) else { return }
        say(result.id?.uuidString ?? "?")
    }
}

struct Resign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stop offering an activity this host published.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The activity ID printed by publish.") var id: String

    func validate() throws {
        guard UUID(uuidString: id) != nil else { throw ValidationError("\(id) is not an activity ID (a UUID as printed by publish)") }
    }

    func run() async throws {
        guard try await options.call(.resign(id: UUID(uuidString: id)!), as: ResignResult.self, prettyJSON: false) != nil else { return }
        say("resigned \(id)")
    }
}

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a file or a URL to an app on another host; the app gets open(_:sourceApplication:annotation:).",
        discussion: "A file lands in the app's Inbox on that host (read-only), streamed: the receiver's limits.maxOpenFileBytes is the only cap. Exits 0 when the app handled it.")
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("The peer's name, as `handoff peers` shows it.", valueName: "name"))
    var peer: String
    @Option(name: .long, help: ArgumentHelp("The receiving app's bundle ID.", valueName: "bundle-id"))
    var app: String
    @Option(name: .long, help: ArgumentHelp("A JSON value passed to the app as the annotation.", valueName: "json"))
    var annotation: String?
    @Argument(help: "A file to send, or an absolute URL.") var target: String

    func run() async throws {
        var annotationValue: PropertyListValue?
        if let annotation {
            do { annotationValue = try PropertyListValue(json: try JSONValue(parsing: annotation)) } catch { throw ValidationError("--annotation: \(error)") }
        }
        let answer: JSONValue
        if FileManager.default.fileExists(atPath: target) {
            switch await OpenFileStreamer.open(target, peer: peer, app: app, annotation: annotationValue, socketPath: options.socketPath) {
            case .success(let value): answer = value
            case .failure(let error):
                options.report(error)
                throw ExitCode(1)
            }
        } else if let url = URL(string: target), url.scheme != nil {
            answer = try await options.call(.open(.init(peer: peer, bundleID: app, target: .url(url), annotation: annotationValue)))
        } else {
            throw ValidationError("\(target) is neither a file nor an absolute URL")
        }
        let result = OpenResult(json: answer)
        if options.json { print(answer.serialized) } else { say(result.handled ? "\(app) on \(peer) opened it" : "\(app) on \(peer) did not handle it") }
        if !result.handled { throw ExitCode(1) }
    }
}
