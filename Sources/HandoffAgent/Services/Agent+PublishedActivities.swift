import HandoffCore
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    /// A new agent's store: the activities `handoff publish` published before the agent last
    /// stopped (``PublishedActivitiesFile``), with their IDs, the expired ones dropped. A file
    /// that cannot be read is moved aside with a warning, and the agent starts with none.
    static func restoredStore(_ file: PublishedActivitiesFile?, now: Date, logger: Logger) -> ActivityStore {
        var store = ActivityStore()
        guard let file else { return store }
        switch file.load(now: now) {
        case .activities(let activities):
            for activity in activities { store.publish(activity) }
            if !activities.isEmpty {
                logger.info("published again the activities `handoff publish` published before the restart",
                            metadata: ["handoff.count": "\(activities.count)", "handoff.file": "\(file.path)"])
            }
        case .unreadable(let reason, let movedTo):
            logger.warning("cannot read the published activities; starting without them", metadata: [
                "handoff.file": "\(file.path)", "handoff.reason": "\(reason)", "handoff.movedTo": "\(movedTo.isEmpty ? "not moved" : movedTo.joined(separator: ", "))",
            ])
        }
        return store
    }

    /// Writes the activities that outlive a restart (``PublishedActivitiesFile/kept(in:)``) when
    /// they changed: after a publish, a resign or an expiry. Returns once the file holds them (or
    /// a newer snapshot), the write done off the actor (``KeptActivitiesWriter``), which is free
    /// for other work meanwhile. A failure to write is logged; the agent runs on with the
    /// activities in memory.
    func keepPublishedActivities() async {
        // Submitted here, on the actor, so snapshots go in the order of the changes.
        guard let submission = keptActivitiesWriter?.submit(PublishedActivitiesFile.kept(in: store)) else { return }
        await keptActivitiesWriter?.written(submission)
    }

    /// Returns once every snapshot of the kept activities is written: handoffd calls it after its
    /// services stopped, before it exits, so a publish whose answer was cut off is kept too.
    public nonisolated func finishKeepingPublishedActivities() async {
        await keptActivitiesWriter?.flush()
    }
}
