import HandoffCore

extension HandoffApplication {
    /// The launch, inside ``run()`` before any event is delivered, in UIKit's order:
    /// willFinishLaunching, state restoration, didFinishLaunching. When the agent started the app
    /// for something and a hook returns false, that continuation or open is refused
    /// (``LaunchRefusal``); didFinishLaunching is still called, as UIKit does.
    func finishLaunching(_ options: LaunchOptions) async {
        var proceed = await delegate.willFinishLaunching(options: options)
        await restoreApplicationState()
        launched = true
        proceed = await delegate.didFinishLaunching(options: options) && proceed
        if !proceed, options.hasReason { launchRefusal = LaunchRefusal(options: options) }
    }
}

/// What a launch whose hook returned false refuses: the `continue` of the continuation the app
/// was started for (answered `launchDeclined`, so the continuing side gets error 4608, with its
/// `willContinue` and `didFail` kept from the delegate), or the first `openURL` for an open.
struct LaunchRefusal: Sendable {
    let options: LaunchOptions
    private var openRefused = false

    init(options: LaunchOptions) { self.options = options }

    /// nil: deliver the event. true: answer it `launchDeclined`. false: drop it unanswered.
    mutating func refuses(_ event: AppEvent) -> Bool? {
        switch event {
        case .continueActivity(let continuing, _, _) where continuing.continuationID == options.continuationID:
            return true
        case .willContinue(let continuing) where continuing.continuationID == options.continuationID,
             .didFail(let continuing, _) where continuing.continuationID == options.continuationID:
            return false
        case .openURL where options.opensResource && !openRefused:
            openRefused = true
            return true
        default:
            return nil
        }
    }
}
