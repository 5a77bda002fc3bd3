// Pure parts of HandoffDiscovery: backoff, renaming, TXT checks, which queried TXT record is current, instance bookkeeping. The DNS-SD calls themselves are exercised on simulated hosts by HandoffIntegrationTests.
import Testing
@testable import HandoffDiscovery

@Test func backoffDoublesAndCaps() {
    let backoff = DNSServiceBackoff()
    #expect(backoff.delay(afterFailures: 0) == .zero)
    #expect(backoff.delay(afterFailures: 1) == .milliseconds(250))
    #expect(backoff.delay(afterFailures: 2) == .milliseconds(500))
    #expect(backoff.delay(afterFailures: 3) == .seconds(1))
    #expect(backoff.delay(afterFailures: 5) == .seconds(4))
    #expect(backoff.delay(afterFailures: 6) == .seconds(5))
    #expect(backoff.delay(afterFailures: 1000) == .seconds(5))
    #expect(DNSServiceBackoff(initial: .seconds(2), maximum: .seconds(1)).maximum == .seconds(2))
}

@Test func alternativeNames() {
    #expect(AlternativeServiceName.candidate("h1", attempt: 1) == "h1")
    #expect(AlternativeServiceName.candidate("h1", attempt: 2) == "h1 #2")
    let long = String(repeating: "é", count: 40)  // 80 bytes
    let candidate = AlternativeServiceName.candidate(long, attempt: 12)
    #expect(candidate.utf8.count <= 63)
    #expect(candidate.hasSuffix(" #12"))
}

@Test func namesBeforeARename() {
    #expect(AlternativeServiceName.namesBeforeRename("handoff-0123456789ab #2") == ["handoff-0123456789ab"])
    #expect(AlternativeServiceName.namesBeforeRename("h1 #5") == ["h1", "h1 #4"])
    for name in ["h1", "h1 #1", "h1 #0", "h1 #02", "h1#2", " #2", "h1 #", "h1 #2a", "h1 #١٢", "#2"] {
        #expect(AlternativeServiceName.namesBeforeRename(name).isEmpty, "\(name)")
    }
    // What a rename makes is undone.
    #expect(AlternativeServiceName.namesBeforeRename(AlternativeServiceName.candidate("kitchen", attempt: 7)).first == "kitchen")
}

@Test func txtValidation() {
    #expect(TXTRecordValidation.isWellFormed([]))
    #expect(TXTRecordValidation.isWellFormed([0]))
    #expect(TXTRecordValidation.isWellFormed([3, 0x61, 0x3d, 0x62, 1, 0x78]))
    #expect(!TXTRecordValidation.isWellFormed([4, 0x61]))
    #expect(!TXTRecordValidation.isWellFormed([UInt8](repeating: 0, count: 70000)))
    #expect(TXTRecordValidation.publishable([]) == [0])
}

@Test func queriedTXTLiveUpdateWins() {
    let start = ContinuousClock.now
    var records = QueriedTXTRecords(startedAt: start)
    #expect(!records.hasAnswered)
    records.add([1, 0x61], at: start)
    #expect(records.current == [1, 0x61] && records.hasAnswered)
    records.add([1, 0x62], at: start + .seconds(2))  // live update
    #expect(records.current == [1, 0x62])
    records.remove([1, 0x61])  // old one flushed
    #expect(records.current == [1, 0x62])
    records.remove([1, 0x62])  // goodbye: keep the last current
    #expect(records.current == [1, 0x62])
}

@Test func queriedTXTCachedRecordsFirstDeliveredIsCurrent() {
    let start = ContinuousClock.now
    var records = QueriedTXTRecords(startedAt: start)
    records.add([1, 0x63], at: start)  // newest, Avahi delivers it first
    records.add([1, 0x62], at: start)  // superseded, lingering in the cache
    #expect(records.current == [1, 0x63])
    records.remove([1, 0x62])
    #expect(records.current == [1, 0x63])
}

@Test func queriedTXTTwoRecordsInTheWindowAskAgain() {
    let start = ContinuousClock.now
    var records = QueriedTXTRecords(startedAt: start)
    records.add([1, 0x61], at: start)  // cached: e.g. the record sealed for the name before a rename
    records.add([1, 0x61], at: start + .milliseconds(1))  // the same again (another IP protocol): no doubt
    #expect(!records.asksAgain)
    records.add([1, 0x62], at: start + .milliseconds(70))  // a live update, or a cached record delivered late
    #expect(records.current == [1, 0x61] && records.asksAgain)
    // Asked again, with both cached: the first delivered is the newest, and no more asking.
    let later = start + .milliseconds(320)
    var again = QueriedTXTRecords(startedAt: later, askedAgain: true)
    again.add([1, 0x62], at: later)
    again.add([1, 0x61], at: later + .milliseconds(1))
    #expect(again.current == [1, 0x62] && !again.asksAgain)
    // A record after the window is a live update: current at once, nothing asked again.
    var live = QueriedTXTRecords(startedAt: start)
    live.add([1, 0x61], at: start)
    live.add([1, 0x62], at: start + .seconds(1))
    #expect(live.current == [1, 0x62] && !live.asksAgain)
}

@Test func queriedTXTWrongGuessIsCorrectedByRemoval() {
    let start = ContinuousClock.now
    var records = QueriedTXTRecords(startedAt: start)
    records.add([1, 0x61], at: start)
    records.add([1, 0x62], at: start)
    records.remove([1, 0x61])  // the guess was the stale one
    #expect(records.current == [1, 0x62])
}

@Test func goodbyeDoesNotRevertToSupersededRecord() {
    let start = ContinuousClock.now
    var records = QueriedTXTRecords(startedAt: start)
    records.add([1, 0x61], at: start)
    records.add([1, 0x62], at: start + .seconds(1))
    records.remove([1, 0x62])  // goodbye of the current record first
    #expect(records.current == [1, 0x62])
}

@Test func instanceSightingsAndAddresses() {
    var instance = BrowsedInstance(instanceName: "h1", serviceType: "_handoff._tcp.", domain: "local.")
    instance.addSighting(on: 3)
    instance.addSighting(on: 2)
    instance.addSighting(on: 2)
    #expect(instance.preferredInterface == 2)
    instance.removeSighting(on: 2)
    #expect(instance.preferredInterface == 2)
    instance.removeSighting(on: 2)
    #expect(instance.preferredInterface == 3)
    instance.addAddress("10.0.0.1")
    instance.addAddress("10.0.0.1")
    instance.addAddress("10.0.0.2")
    instance.removeAddress("10.0.0.1")
    #expect(instance.addresses == ["10.0.0.1", "10.0.0.2"])
    instance.removeAddress("10.0.0.1")
    #expect(instance.addresses == ["10.0.0.2"])
}

@Test func errorDescription() {
    let error = DNSServiceError(code: -65537, operation: "DNSServiceBrowse")
    #expect(error.description == "DNSServiceBrowse failed: Unknown (-65537)")
    #expect(error.isRetryable)
    #expect(!DNSServiceError(code: -65540, operation: "x").isRetryable)
}

@Test func queriedTXTRecordsStayBoundedUnderInjection() {
    // Anyone can send distinct TXT records for an instance; each would linger for its TTL.
    let start = ContinuousClock.now
    var records = QueriedTXTRecords(startedAt: start)
    records.add([1, 0x61], at: start)
    for i in 0..<10_000 {
        records.add([2, UInt8(i % 256), UInt8(i / 256)], at: start)  // cached answers: the first stays current
        #expect(records.presentCount <= QueriedTXTRecords.maximumPresent)
    }
    #expect(records.current == [1, 0x61])
    records.add([1, 0x7a], at: start + .seconds(2))  // a live update still wins
    #expect(records.current == [1, 0x7a] && records.presentCount <= QueriedTXTRecords.maximumPresent)
    records.remove([2, 0, 0])  // long forgotten: ignored
    #expect(records.current == [1, 0x7a])
}
