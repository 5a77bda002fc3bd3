import HandoffConfiguration
import HandoffCore

/// Who is offered a continued activity that no app took, in order: a pure decision from the
/// activity and the configuration. ``ActivityDispatcher`` runs the steps until one succeeds.
///
/// The configured handlers for the activity's type come first, in config order; a handler with
/// `streams` gets the continuation streams when the activity supports them and the agent can
/// open them. Then the URL opener for the activity's `webpageURL`, if the URL policy allows it
/// (``PeerURLPolicy``); a refused URL is a step too, so the person hears why it was not opened.
struct DeliveryPlan: Sendable, Equatable {
    /// One way of delivering the activity.
    enum Step: Sendable, Equatable {
        /// Run a configured handler: on the continuation streams, or with the activity's JSON on standard input.
        case handler(command: [String], streams: Bool)
        /// Open the web page: the URL opener's command with the URL as its last argument.
        case openURL(command: [String])
        /// The web page URL is not allowed; this is why.
        case refuseURL(reason: String)
    }

    let steps: [Step]

    init(_ activity: Activity, handlers: [AgentConfiguration.Handler], urlOpener: [String], urlPolicy: PeerURLPolicy, canOpenStreams: Bool) {
        var steps = handlers.filter { $0.accepts(activity.activityType) }.map { handler in
            Step.handler(command: handler.command, streams: handler.streams && activity.supportsContinuationStreams && canOpenStreams)
        }
        if let url = activity.webpageURL {
            switch urlPolicy.webpageArgument(url) {
            case .success(let argument): steps.append(.openURL(command: urlOpener + [argument]))
            case .failure(let refused): steps.append(.refuseURL(reason: refused.message))
            }
        }
        self.steps = steps
    }
}

/// What the steps of a ``DeliveryPlan`` that failed said, and the error the continuation then
/// reports (4608, naming each step tried).
struct DeliveryFailures: Sendable, Equatable {
    private var notes: [String] = []
    /// The reason of a refused URL, while it is the only step tried.
    private var onlyRefusal: String?

    /// A step failed, for this reason.
    mutating func failed(_ note: String) {
        onlyRefusal = nil
        notes.append(note)
    }

    /// The URL step was refused, for this reason.
    mutating func refused(_ reason: String) {
        onlyRefusal = notes.isEmpty ? reason : nil
        notes.append(reason)
    }

    /// The error of a continuation of `type` whose steps all failed.
    func error(for type: ActivityType) -> HandoffError {
        if let onlyRefusal { return .handoffFailed(onlyRefusal) }
        if notes.isEmpty {
            return .handoffFailed(
                "no handler takes \(type) and the activity has no webpageURL. Add a handler for it to the config (handlers) and reload handoffd (systemctl --user reload handoffd, or kill -HUP).")
        }
        return .handoffFailed("the activity was not handled: \(notes.joined(separator: "; ")).")
    }
}
