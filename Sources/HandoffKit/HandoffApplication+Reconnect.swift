import HandoffCore
import HandoffTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a running ``HandoffApplication`` knows about getting its agent back after the control
/// connection dropped (an agent restart).
struct ReconnectionState: Sendable {
    /// When to try again.
    var backoff = ReconnectBackoff()
    /// Whether the connection dropped and the app is not registered again yet.
    var isReconnecting = false
    /// A new connection on which the app is registering again.
    var joining: ControlChannel?
    /// Callers waiting for the connection (requests that need the agent's answer), by waiter ID.
    var waiters: [UUID: CheckedContinuation<ControlChannel?, Never>] = [:]
    /// Waiters whose time was up before they were waiting: they stop at once.
    var expired: Set<UUID> = []
    /// The activities made current, oldest first: published again in this order, so the agent
    /// advertises the same one.
    var order: [UUID] = []
    /// How long a request that needs the agent's answer waits for a dropped connection to come
    /// back before it fails (4609).
    var waitLimit: Duration = .seconds(10)

    /// Notes that activity `id` was made current (again).
    mutating func madeCurrent(_ id: UUID) {
        order.removeAll { $0 == id }
        order.append(id)
    }
}

extension HandoffApplication {
    /// Runs `channel`'s reader in `group` and feeds its events into `work`, then, when it
    /// closes, `.connectionLost`.
    static func read(_ channel: ControlChannel, into work: AsyncStream<Work>.Continuation, group: inout TaskGroup<Void>) {
        group.addTask { await channel.readFrames() }
        group.addTask {
            for await (event, replyID) in channel.events { work.yield(.event(event, replyID: replyID)) }
            work.yield(.connectionLost(channel))
        }
    }

    /// The connection to the agent dropped: returns whether to reconnect (false for a channel
    /// already replaced).
    func connectionLost(_ channel: ControlChannel) -> Bool {
        if channel === reconnection.joining {
            reconnection.joining = nil
            return true
        }
        guard channel === connection else { return false }
        connection = nil
        reconnection.isReconnecting = true
        Self.report("HandoffKit: \(manifest.identity.bundleID) lost its connection to the handoff agent at \(socketPath); reconnecting")
        return true
    }

    /// Connects to the agent again, waiting longer after each failure (``ReconnectBackoff``); the
    /// new channel goes into `work` as `.connected`. Ends early when ``run()`` ends.
    func reconnect(into work: AsyncStream<Work>.Continuation) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: reconnection.backoff.next()) } catch { return }
            guard let channel = try? await connectToAgent() else { continue }
            reconnection.joining = channel
            work.yield(.connected(channel))
            return
        }
    }

    /// Registers the app again on `channel` (its reader runs) and publishes again every activity
    /// it holds current, with the same IDs, oldest first; the calls made meanwhile are applied
    /// (a resign simply is not published again). A refusal closes `channel`, so the app tries
    /// again later.
    func resume(on channel: ControlChannel) async {
        if case .failure(let error) = await channel.request(.registerApp(manifest)) {
            Self.report("HandoffKit: the handoff agent refused to register \(manifest.identity.bundleID) again (\(error.message)); trying again")
            await channel.close()
            return
        }
        guard channel === reconnection.joining else { return await channel.close() }  // run() ended meanwhile
        reconnection.joining = nil
        reconnection.isReconnecting = false
        reconnection.backoff.reset()
        connection = channel
        for waiter in reconnection.waiters.values { waiter.resume(returning: channel) }
        reconnection.waiters = [:]
        var again = 0
        for id in reconnection.order {
            guard let activity = published[id] else { continue }
            switch await channel.request(.publish(activity.snapshot)) {
            case .success:
                again += 1
                // Resigned while this publish was on its way.
                if published[id] == nil { _ = await channel.request(.resign(id: id)) }
            case .failure(let error):
                Self.report("HandoffKit: could not make \(activity.activityType) \(id) current again: \(error.message)")
            }
        }
        Self.report("HandoffKit: \(manifest.identity.bundleID) reconnected to the handoff agent; \(again) activities current again")
    }

    /// Keeps `activity` current while the agent is away: it is published when the app is
    /// registered again (``resume(on:)``).
    func holdUntilReconnected(_ activity: UserActivity) {
        published[activity.identifier] = activity
        reconnection.madeCurrent(activity.identifier)
        Self.report("HandoffKit: the handoff agent is away; \(activity.activityType) \(activity.identifier) becomes current when it is back")
    }

    /// Whether a failed request is to be applied when the app is registered again: the
    /// connection dropped while ``run()`` runs.
    func appliesOnReconnect(_ error: HandoffError) -> Bool {
        guard hostSink != nil else { return false }
        return reconnection.isReconnecting || error.code == .userActivityConnectionUnavailable
    }

    /// The connection to the agent for a request that needs its answer; while reconnecting,
    /// waits for it up to ``ReconnectionState/waitLimit``, then fails with 4609.
    func connectedChannel() async throws(HandoffError) -> ControlChannel {
        try await waitUntilConnected()
        if let connection { return connection }
        guard reconnection.isReconnecting, hostSink != nil else { throw .connectionUnavailable("the app is not connected to its agent") }
        let waiterID = UUID.random(), limit = reconnection.waitLimit
        // The reconnect, raced against the limit: whichever ends first answers, and the other ends with it.
        let channel = await withTaskGroup(of: ControlChannel?.self) { group in
            group.addTask { await self.reconnected(waiterID) }
            group.addTask {
                // Cancelled (the connection came back first): nothing to stop.
                guard (try? await Task.sleep(for: limit)) != nil else { return nil }
                await self.stopWaiting(waiterID)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let channel else {
            throw .connectionUnavailable(
                "the handoff agent at \(socketPath) did not come back within \(limit); the app keeps reconnecting: try again later, or start handoffd")
        }
        return channel
    }

    /// Sets how long requests wait for a dropped connection (tests).
    func limitReconnectWait(to limit: Duration) { reconnection.waitLimit = limit }

    /// The connection once the app is registered again (nil if ``stopWaiting(_:)`` came first).
    private func reconnected(_ waiterID: UUID) async -> ControlChannel? {
        if reconnection.expired.remove(waiterID) != nil { return nil }
        if let connection, !reconnection.isReconnecting { return connection }  // back already
        return await withCheckedContinuation { reconnection.waiters[waiterID] = $0 }
    }

    /// The waiter's time is up: it stops waiting, now or as soon as it would start.
    private func stopWaiting(_ waiterID: UUID) {
        guard let waiter = reconnection.waiters.removeValue(forKey: waiterID) else {
            // Not waiting yet (else it was answered: the connection came back).
            if reconnection.isReconnecting { reconnection.expired.insert(waiterID) }
            return
        }
        waiter.resume(returning: nil)
    }

    /// run() ended: no more reconnecting; the waiting requests fail.
    func endReconnecting() async {
        if let joining = reconnection.joining { await joining.close() }
        for waiter in reconnection.waiters.values { waiter.resume(returning: nil) }
        reconnection = ReconnectionState(waitLimit: reconnection.waitLimit)
    }
}
