import HandoffConfiguration
import HandoffCore
import Logging

/// Hands a continued activity to the local handlers: the configured commands for its type, in
/// order, then the URL opener for its webpageURL. Delivers at most once per call.
public struct ActivityDispatcher: Sendable {
    /// Who took the activity.
    public struct Delivery: Sendable, Equatable {
        /// `handler` or `urlOpener`.
        public var by: String
        /// The command that took it.
        public var command: [String]
    }

    public var handlers: [AgentConfiguration.Handler]
    public var urlOpener: [String]
    /// Which web page URLs the opener may be given.
    public var urlPolicy: PeerURLPolicy
    public var timeout: Duration
    public var runner: CommandRunner
    public var logger: Logger

    public init(configuration: AgentConfiguration, runner: CommandRunner = .init(), logger: Logger) {
        self.handlers = configuration.handlers
        self.urlOpener = configuration.urlOpener
        self.urlPolicy = PeerURLPolicy(webpageSchemes: configuration.security.urlSchemes)
        self.timeout = configuration.limits.handlerTimeout
        self.runner = runner
        self.logger = logger
    }

    /// Runs the steps of the activity's ``DeliveryPlan`` until one succeeds: the first handler
    /// for its type that exits 0, else the URL opener for its webpageURL; else fails with 4608
    /// saying what was tried (``DeliveryFailures``). A handler with `streams` gets the continuation
    /// streams on stdin/stdout when the activity supports them and `streams` can open them.
    /// `json` is the activity's ``Activity/json`` when the caller has made it already.
    public func deliver(_ activity: Activity, json: JSONValue? = nil, from peer: String,
                        streams: (@Sendable (_ command: [String], _ environment: [String: String]) async -> Result<CommandOutcome, HandoffError>)? = nil)
        async -> Result<Delivery, HandoffError>
    {
        let json = json ?? activity.json
        var input = json.serializedBytes
        input.append(UInt8(ascii: "\n"))
        var environment = [
            "HANDOFF_ACTIVITY_TYPE": activity.activityType.rawValue,
            "HANDOFF_ACTIVITY_ID": activity.id.uuidString,
            "HANDOFF_PEER": peer,
        ]
        // The page that led to the activity, under the rules of its webpageURL (security.urlSchemes).
        if let referrer = activity.referrerURL, case .success(let text) = urlPolicy.webpageArgument(referrer) {
            environment["HANDOFF_REFERRER_URL"] = text
        }
        let plan = DeliveryPlan(activity, handlers: handlers, urlOpener: urlOpener, urlPolicy: urlPolicy, canOpenStreams: streams != nil)
        var failures = DeliveryFailures()
        for step in plan.steps {
            switch step {
            case .handler(let command, let onStreams):
                let outcome: CommandOutcome
                if onStreams, let streams {
                    var streamEnvironment = environment
                    streamEnvironment["HANDOFF_ACTIVITY"] = json.serialized
                    switch await streams(command, ChildEnvironment.current(adding: streamEnvironment)) {
                    case .success(let result): outcome = result
                    case .failure(let error):
                        failures.failed("handler \(command.joined(separator: " ")): \(error.message)")
                        continue
                    }
                } else {
                    outcome = await runner.run(command, input: input, environment: environment, timeout: timeout)
                }
                // A failed handler is a warning: the next one is tried, and if none takes the
                // activity the continuation fails. Success is the agent's "continuation delivered".
                logger.log(level: outcome.succeeded ? .debug : .warning, "handler finished", metadata: [
                    "handoff.activity": "\(activity.activityType)", "handoff.command": "\(command)", "handoff.outcome": "\(outcome.description)",
                ])
                if outcome.succeeded { return .success(Delivery(by: "handler", command: command)) }
                failures.failed("handler \(command.joined(separator: " ")) \(outcome.description)")
            case .openURL(let command):
                let outcome = await runner.run(command, input: [], environment: environment, timeout: timeout)
                if outcome.succeeded { return .success(Delivery(by: "urlOpener", command: command)) }
                failures.failed("urlOpener \(urlOpener.joined(separator: " ")) \(outcome.description)")
            case .refuseURL(let reason):
                logger.info("web page URL not opened", metadata: [
                    "handoff.activity": "\(activity.activityType)", "handoff.url": "\(activity.webpageURL?.absoluteString ?? "")",
                ])
                failures.refused(reason)
            }
        }
        return .failure(failures.error(for: activity.activityType))
    }
}
