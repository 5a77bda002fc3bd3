#if canImport(dnssd)
import dnssd
#else
import CDNSSD
#endif
import Logging
import ServiceLifecycle
import Synchronization

/// The browser's timers (debounced removals, turns, restarts) and the effects its state changes ask for.
extension ServiceBrowser {
    // MARK: - Timers and effects

    func requestTimer(_ timer: Timer, after delay: Duration) {
        state.withLock { state in
            _ = state.timers?.yield(TimerRequest(delay: delay, timer: timer))
        }
    }

    func timerFired(_ timer: Timer) {
        let effects = state.withLock { state -> [Effect] in
            guard !state.stopping else { return [] }
            switch timer {
            case .reportHoldOver(let name, let token):
                guard let instance = state.instances[name], instance.reportHold == token else { return [] }
                if instance.isHoldingReport {
                    logger.debug(
                        "Record queries have not answered; reporting what is known",
                        metadata: [
                            "handoff.peer": "\(name)",
                            "handoff.txt.answered": "\(instance.queriedTXTRecords?.hasAnswered ?? false)",
                            "handoff.address.answered": "\(instance.addressQueryAnswered)",
                        ])
                }
                state.instances[name]!.reportHold = nil
                reportIfChanged(name, in: &state)
                return []
            case .removalDebounceOver(let name, let token):
                guard state.instances[name]?.removalDebounce == token else { return [] }
                state.instances[name]!.removalDebounce = nil
                reportIfChanged(name, in: &state)
                return []
            case .retryResolve(let name):
                return startResolveIfNeeded(name, in: &state)
            case .retryTXTQuery(let name):
                return startTXTQuery(name, in: &state)
            case .askTXTAgain(let name, let token):
                guard let query = state.instances[name]?.txtQuery, query.token == token else { return [] }
                state.instances[name]!.txtQuery = nil
                return [.cancel(query.operation)] + startTXTQuery(name, in: &state, askedAgain: true)
            case .retryAddressQuery(let name):
                return startAddressQuery(name, in: &state)
            case .sweepStale(let generation):
                // Only if that browse has been running all along: after a failure the instances
                // are stale again and get a new grace period with the next browse.
                guard state.runningBrowseGeneration == generation else { return [] }
                var effects: [Effect] = []
                for (name, instance) in state.waiting where instance.isStale {
                    state.waiting[name] = nil
                    _ = state.slots.disappeared(name, now: .now)
                }
                for (name, instance) in state.instances where instance.isStale {
                    state.instances[name] = nil
                    effects += forget(instance) + apply(state.slots.disappeared(name, now: .now), in: &state)
                }
                return effects
            case .rotate:
                state.rotationScheduled = false
                return apply(state.slots.rotate(now: .now), in: &state)
            }
        }
        apply(effects)
    }

    /// Starts and cancels operations; called without the lock held, because an operation that
    /// the poller refuses reports that synchronously through its `onFinish`.
    func apply(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .start(let operation): operation.start()
            case .cancel(let operation): operation.cancel()
            }
        }
    }

    /// Cancels every resolve and query, waits until their refs are deallocated, and stops the
    /// poller thread.
    func stopAllOperations() async {
        let operations = state.withLock { state -> [DNSServiceOperation] in
            state.stopping = true
            state.timers = nil
            state.instances = [:]
            state.waiting = [:]
            return Array(state.liveOperations.values)
        }
        for operation in operations { operation.cancel() }
        for operation in operations { _ = await operation.finished() }
        await poller.stop()
    }
}
