import HandoffTestSupport

/// One small message, one way, as KDE Connect's ping is measured (`scripts/bench --peers`): an
/// activity published on S1's agent, until S2's agent tells its watcher it is on offer (the
/// `activityOffered` event on a `watch` connection, a running local client). The activity travels
/// on the kept connection between the agents (the pushed advertisement, docs/PROTOCOL.md). Each
/// sample runs from just before the publish request is sent to the event's arrival; the publish
/// answer is read after, so it does not delay the watcher's read. The request (the activity and
/// its JSON frame) is made before the sample starts, as an app has its activity ready when it
/// publishes it and as KDE Connect's probe makes its D-Bus call before its clock starts
/// (Benchmarks/Reference/kdeconnect-probe.c). Each message is resigned once
/// seen, so the publisher's earlier activity is its newest again, then the next waits `gapMs`.
/// `extra["answer_us"]`: the time from the same start until the publish answer is read (the
/// publisher's agent answers once the activity is kept for its next start).
func runMessage(publishSocket: String, watchSocket: String, count: Int, warmup: Int, gapMs: Int) throws -> Samples {
    var out = Samples()
    var answers: [Double] = []
    let publisher = try ControlConnection(path: publishSocket)
    let watcher = try ControlConnection(path: watchSocket)
    _ = try watcher.call("watch")
    let clock = ContinuousClock()
    for i in 0..<(count + warmup) {
        let title = "Message \(i)"
        let request = ControlConnection.requestFrame("publish", ["activity": BenchmarkFixtures.activity(title: title).json])
        let start = clock.now
        try publisher.send(frame: request)
        var seenAt: ContinuousClock.Instant?
        while seenAt == nil, (clock.now - start).microseconds < 5_000_000 {
            let event = try watcher.readResponse()
            if event["event"]?.stringValue == "activityOffered", event["title"]?.stringValue == title { seenAt = clock.now }
        }
        let id = try publisher.answer()["id"]
        if i >= warmup { answers.append((clock.now - start).microseconds) }
        if let seenAt {
            if i >= warmup { out.samples.append((seenAt - start).microseconds) }
        } else {
            out.fail("\(title) not offered on the watcher within 5 s")
        }
        if let id { _ = try? publisher.call("resign", ["id": id]) }
        sleepMilliseconds(gapMs)
    }
    out.extra["answer_us"] = .array(answers.map { .double(($0 * 10).rounded() / 10) })
    return out
}
