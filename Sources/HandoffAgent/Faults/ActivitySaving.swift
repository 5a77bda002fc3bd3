import HandoffCore
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the agent has an app save one of its activities before a peer fetches it (`willSave`).
///
/// ``Agent/prepareForFetch(id:saving:)`` is given one by the fetch's ``FetchAnswering``. Without
/// faults it is ``AppActivitySaving``; with `faults.willSaveDelayMs` set (`handoff fault`,
/// docs/FAULTS.md) it is that one wrapped in ``SlowActivitySaving``, so the fetch path itself
/// holds no fault logic. It runs on the agent (`isolated`): no hop to ask the app.
protocol ActivitySaving: Sendable {
    /// Asks `app`, over `link`, to save activity `id` within `timeout`: the saved activity's JSON,
    /// or why there is none (4610 when the app did not answer in time).
    func save(_ id: UUID, by app: AppIdentity, over link: ControlLink, within timeout: Duration,
              agent: isolated Agent) async -> Result<JSONValue, HandoffError>
}

/// Asks the app with `willSave` and waits at most the timeout for its answer.
struct AppActivitySaving: ActivitySaving {
    func save(_ id: UUID, by app: AppIdentity, over link: ControlLink, within timeout: Duration,
              agent: isolated Agent) async -> Result<JSONValue, HandoffError> {
        guard let reply = await agent.ask(link, .willSave(activityID: id), timeout: timeout), let saved = reply.activity else {
            return .failure(.remoteTimedOut(
                "the app \(app.bundleID) on \(agent.configuration.name) did not save the activity within \(timeout) (userActivityWillSave)"))
        }
        return .success(saved)
    }
}

/// Another way of saving, with the app slowed (`faults.willSaveDelayMs`): the delay passes on the
/// agent's clock before the app is asked, and comes out of the app's time. A delay of the whole
/// timeout or more fails, as an app that never answered would, without asking it.
struct SlowActivitySaving: ActivitySaving {
    let base: any ActivitySaving
    let delay: Duration

    func save(_ id: UUID, by app: AppIdentity, over link: ControlLink, within timeout: Duration,
              agent: isolated Agent) async -> Result<JSONValue, HandoffError> {
        agent.logger.info("fault: slowing the app's willSave", metadata: ["handoff.id": "\(id)", "handoff.delay": "\(delay)"])
        try? await agent.clock.sleep(for: min(delay, timeout))
        guard delay < timeout else {
            return .failure(.remoteTimedOut(
                "the app \(app.bundleID) on \(agent.configuration.name) did not save the activity within \(timeout) (userActivityWillSave; faults.willSaveDelayMs)"))
        }
        return await base.save(id, by: app, over: link, within: timeout - delay, agent: agent)
    }
}

extension FaultPlan {
    /// How apps are asked to save with these faults: slowed by `willSaveDelayMs` when it is set.
    var activitySaving: any ActivitySaving {
        let plain = AppActivitySaving()
        guard willSaveDelay > .zero else { return plain }
        return SlowActivitySaving(base: plain, delay: willSaveDelay)
    }
}
