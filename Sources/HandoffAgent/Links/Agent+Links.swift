import HandoffCore
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Links that last (Quick Note)

    /// The peer name apps are told for content continued from a link: it comes from no device.
    public static let linkPeerName = "link"

    /// `link`: a lasting link (``HandoffLink``) to the content of an activity this host holds (by
    /// ID or unique prefix), or by persistent identifier to one held or saved here for search.
    public func link(to source: ControlRequest.LinkSource) async -> Result<LinkResult, HandoffError> {
        let activity: Activity
        switch source {
        case .held(let id):
            switch heldActivity(matching: id) {
            case .failure(let error): return .failure(error)
            case .success(let held): activity = held
            }
        case .saved(let persistentIdentifier):
            if let held = store.all.last(where: { $0.persistentIdentifier == persistentIdentifier }) {
                activity = held
            } else {
                switch await savedActivity(persistentIdentifier: persistentIdentifier) {
                case .failure(let error): return .failure(error)
                case .success(let saved): activity = saved
                }
            }
        }
        do {
            return .success(LinkResult(try HandoffLink(activity)))
        } catch {
            return .failure(.handoffFailed("cannot link to \(activity.activityType): \(error.reason)"))
        }
    }

    /// The held activity whose ID is `id` or starts with it (at least 4 characters).
    private func heldActivity(matching id: String) -> Result<Activity, HandoffError> {
        let wanted = id.lowercased()
        let matches = store.all.filter { $0.id.uuidString.lowercased().hasPrefix(wanted) }
        if let whole = UUID(uuidString: id), let held = store.activity(id: whole) { return .success(held) }
        guard wanted.count >= 4, let first = matches.first else {
            return .failure(.handoffFailed(
                "this host holds no activity with ID \(UntrustedText.escaped(id)); `handoff status` lists them (give the ID or a prefix of at least 4 characters), or use --persistent-id for a saved one"))
        }
        guard matches.count == 1 else {
            return .failure(.handoffFailed("the prefix \(UntrustedText.escaped(id)) matches \(matches.count) held activities; give more of the ID (`handoff status`)"))
        }
        return .success(first)
    }

    /// The saved activity with this persistent identifier, as an activity (no userInfo).
    private func savedActivity(persistentIdentifier: String) async -> Result<Activity, HandoffError> {
        let missing = HandoffError.handoffFailed(
            "nothing held or saved on this host has the persistent identifier \(UntrustedText.escaped(persistentIdentifier)); `handoff search` finds saved activities")
        do {
            guard let saved = try await savedActivities.index().saved(persistentIdentifier: persistentIdentifier, device: configuration.name, now: wallClock()),
                  let type = ActivityType(rawValue: saved.activityType) else { return .failure(missing) }
            return .success(Activity(activityType: type, title: saved.title, targetContentIdentifier: saved.targetContentIdentifier,
                                     persistentIdentifier: saved.persistentIdentifier, webpageURL: saved.webpageURL))
        } catch let error as HandoffError {
            return .failure(error)
        } catch {
            return .failure(.handoffFailed("cannot read the saved activities: \(error)"))
        }
    }

    /// `continueLink`: continues a link's content here. The link is read strictly; its activity
    /// (the link's fields, an empty userInfo) goes to the local app that declares its type, of any
    /// team, started from its manifest if needed: `willContinue`, then `continue` with its
    /// restoration handler. When no app takes it (none declares the type, or the app returns
    /// false or does not answer), the link's webpageURL goes to the URL opener under the URL
    /// policy; without one, the continuation fails with 4608 saying what to do. A link never runs
    /// a configured handler: its text is anyone's.
    public func continueLink(_ text: String) async -> Result<ContinueResult, HandoffError> {
        let link: HandoffLink
        do { link = try HandoffLink(parsing: text) } catch { return .failure(.handoffFailed(error.description)) }
        let activity = link.activity
        let continuationID = UUID.random()
        let metadata: Logger.Metadata = ["handoff.activity": "\(link.activityType)", "handoff.continuation": "\(continuationID)"]
        logger.info("continuing a link", metadata: metadata)
        var response = ContinueResult(peer: Self.linkPeerName, continuationID: continuationID, activity: activity.json, by: "")
        let continuing = AppEvent.Continuing(continuationID: continuationID, activityType: link.activityType.rawValue, peer: Self.linkPeerName)
        let app = await app(forLinkOf: link.activityType, launchOptions: .continuing(link.activityType.rawValue, continuationID: continuationID))
        var notTaken = "no app on \(configuration.name) declares \(link.activityType)"
        if let app {
            let bundleID = app.manifest.identity.bundleID
            await tell(app.link, .willContinue(continuing))
            let reply = await ask(app.link, .continueActivity(continuing, activity: activity, sourceApplication: nil), timeout: configuration.limits.handlerTimeout)
            if reply?.handled == true {
                logger.info("link continued", metadata: metadata.merging(["handoff.app": "\(bundleID)"]) { $1 })
                response.by = "app"
                response.app = bundleID
                return .success(response)
            }
            notTaken = reply == nil ? "the app \(bundleID) did not answer within limits.handlerTimeout"
                : reply?.launchDeclined == true ? "the app \(bundleID) declined at launch (a launch hook returned false)"
                : "the app \(bundleID) could not find the content (its continue returned false)"
        }
        let outcome = await openWebpage(of: link, activity: activity, notTaken: notTaken)
        switch outcome {
        case .success(let opener):
            logger.info("link opened as a web page", metadata: metadata)
            response.by = opener.by
            response.command = opener.command
            return .success(response)
        case .failure(let error):
            logger.info("link not continued", metadata: metadata.merging(["handoff.message": "\(error.message)"]) { $1 })
            if let app { await tell(app.link, .didFail(continuing, error: error)) }
            return .failure(error)
        }
    }

    /// The fallback of a link no app took: its webpageURL through the URL opener (only the URL
    /// step of a ``DeliveryPlan``: no handler runs), else the error that says what to do.
    private func openWebpage(of link: HandoffLink, activity: Activity, notTaken: String) async -> Result<ActivityDispatcher.Delivery, HandoffError> {
        guard link.webpageURL != nil else {
            return .failure(.handoffFailed(
                "\(notTaken), and the link has no webpageURL to open instead. Install or start the app that declares \(link.activityType) "
                    + "(its manifest in appsDirectory), or make the link from an activity with a webpageURL."))
        }
        var opener = dispatcher
        opener.handlers = []
        return await opener.deliver(activity, from: Self.linkPeerName).mapError { error in
            .handoffFailed("\(notTaken), and its webpageURL was not opened: \(error.message)")
        }
    }
}
