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

    /// Runs the first handler for the activity's type that exits 0; else opens webpageURL;
    /// else fails with 4608 saying what was tried. A handler with `streams` gets the continuation
    /// streams on stdin/stdout when the activity supports them and `streams` can open them.
    public func deliver(_ activity: Activity, from peer: String,
                        streams: (@Sendable (_ command: [String], _ environment: [String: String]) async -> Result<CommandOutcome, HandoffError>)? = nil)
        async -> Result<Delivery, HandoffError>
    {
        let input = activity.json.serializedBytes + [UInt8(ascii: "\n")]
        let environment = [
            "HANDOFF_ACTIVITY_TYPE": activity.activityType.rawValue,
            "HANDOFF_ACTIVITY_ID": activity.id.uuidString,
            "HANDOFF_PEER": peer,
        ]
        var tried: [String] = []
        for handler in handlers where handler.accepts(activity.activityType) {
            let outcome: CommandOutcome
            if handler.streams, activity.supportsContinuationStreams, let streams {
                var streamEnvironment = environment
                streamEnvironment["HANDOFF_ACTIVITY"] = activity.json.serialized
                switch await streams(handler.command, ChildEnvironment.current(adding: streamEnvironment)) {
                case .success(let result): outcome = result
                case .failure(let error):
                    tried.append("handler \(handler.command.joined(separator: " ")): \(error.message)")
                    continue
                }
            } else {
                outcome = await runner.run(handler.command, input: input, environment: environment, timeout: timeout)
            }
            logger.info("handler finished", metadata: [
                "handoff.activity": "\(activity.activityType)", "handoff.command": "\(handler.command)", "handoff.outcome": "\(outcome.description)",
            ])
            if outcome.succeeded { return .success(Delivery(by: "handler", command: handler.command)) }
            tried.append("handler \(handler.command.joined(separator: " ")) \(outcome.description)")
        }
        if let url = activity.webpageURL {
            switch urlPolicy.webpageArgument(url) {
            case .failure(let refused):
                logger.info("web page URL not opened", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.url": "\(url.absoluteString)"])
                // A refused URL is not "nothing to do": the person hears why.
                if tried.isEmpty { return .failure(refused) }
                tried.append(refused.message)
            case .success(let argument):
                let command = urlOpener + [argument]
                let outcome = await runner.run(command, input: [], environment: environment, timeout: timeout)
                if outcome.succeeded { return .success(Delivery(by: "urlOpener", command: command)) }
                tried.append("urlOpener \(urlOpener.joined(separator: " ")) \(outcome.description)")
            }
        }
        if tried.isEmpty {
            return .failure(.handoffFailed(
                "no handler takes \(activity.activityType) and the activity has no webpageURL. Add a handler for it to the config (handlers) and restart handoffd."))
        }
        return .failure(.handoffFailed("the activity was not handled: \(tried.joined(separator: "; "))."))
    }
}
