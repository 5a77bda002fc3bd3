import HandoffCore
import HandoffTransport
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Open URL

    /// Whether an app with this bundle ID is connected; one that has a manifest in
    /// `appsDirectory` is started first, with `options` saying why.
    public func isAppConnected(bundleID: String, forDevice device: DeviceID? = nil, launchOptions options: LaunchOptions = .none) async -> Bool {
        if registry.isRegistered(bundleID) { return true }
        guard let candidate = registry.launchable(bundleID: bundleID) else { return false }
        await launch(candidate, forDevice: device, options: options)
        return registry.isRegistered(bundleID)
    }

    /// Hands a URL (or, with `inboxFile`, a file the agent wrote to the app's Inbox) to the app:
    /// `openURL`, answered within `limits.handlerTimeout`. Returns whether the app handled it.
    public func deliverOpen(url: URL, inboxFile: Bool, request: OpenRequest, peer: String) async -> Result<Bool, HandoffError> {
        guard let app = app(bundleID: request.bundleID) else {
            return .failure(.connectionUnavailable("the app \(request.bundleID) is not running on \(configuration.name)"))
        }
        // The sending agent names the app that asked, from that app's registration; only a
        // well-formed bundle ID is passed on.
        let source = request.sourceApplication.flatMap { AppIdentity.isValidBundleID($0) ? $0 : nil }
        let event = AppEvent.openURL(.init(url: url, peer: peer, inboxFile: inboxFile, sourceApplication: source, annotation: request.annotation))
        logger.info("opening in app", metadata: ["handoff.app": "\(request.bundleID)", "handoff.url": "\(url)", "handoff.peer": "\(peer)"])
        guard let reply = await ask(app.link, event, timeout: configuration.limits.handlerTimeout) else {
            return .failure(.handoffFailed("the app \(request.bundleID) did not answer within limits.handlerTimeout"))
        }
        if reply.launchDeclined == true { return .failure(LaunchOptions.declined(by: request.bundleID)) }
        return .success(reply.handled ?? false)
    }

    /// Sends a URL or a file to an app on a peer (`handoff open`).
    public func open(_ request: OpenRequest, file: [UInt8], onPeer peerName: String) async -> Result<OpenResult, HandoffError> {
        guard let peer = directory.peer(named: peerName) else {
            return .failure(.connectionUnavailable("no peer named \(peerName); `handoff peers` lists them"))
        }
        return await OpenURLTransfer.send(request, file: file, to: peer, agent: self)
    }
}
