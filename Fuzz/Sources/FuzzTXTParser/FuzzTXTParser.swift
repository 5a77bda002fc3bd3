// Fuzzes the DNS-SD TXT record parser: every host on the LAN can publish any TXT rdata under
// the _handoff._tcp service type, and every agent's browser parses it.
//
// Invariants when ActivityAdvertisement(txtRecord:) succeeds:
//   - building .txtRecord gives at most ActivityAdvertisement.maximumRecordSize (1300) bytes;
//   - that record parses again, to an equal advertisement except that the title may be truncated:
//     it is then a prefix (in UTF-8 bytes) of the original, or absent only if the rest of the
//     record leaves no room;
//   - the record of the re-parsed advertisement is the same record (the encoding is stable).
// Whatever the input, it is also used as a title (decoded as UTF-8 with replacement) of a
// largest-possible advertisement, which must stay within 1300 bytes and keep a prefix of the title.

import FuzzSupport
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

private let target = "FuzzTXTParser"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTXTParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    if let advertisement = try? ActivityAdvertisement(txtRecord: input) {
        checkRoundTrip(advertisement, origin: "parsed \(hex(input))")
    }
    checkRoundTrip(largest(title: String(decoding: input, as: UTF8.self)), origin: "largest advertisement with the input as title")
    return 0
}

private let longestType = ActivityType(rawValue: "a." + String(repeating: "b", count: ActivityType.maximumLength - 2))!
private let longestAgentID = String(repeating: "f", count: 64)
private let longestTeamID = String(repeating: "T", count: 64)
private let someID = UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))

/// An advertisement with every field as long as the parser allows, so the title gets the least room.
private func largest(title: String) -> ActivityAdvertisement {
    ActivityAdvertisement(
        agentID: longestAgentID, sequence: .max,
        current: .init(id: someID, activityType: longestType, title: title, teamID: longestTeamID))
}

private func checkRoundTrip(_ advertisement: ActivityAdvertisement, origin: String) {
    let record = advertisement.txtRecord
    require(record.count <= ActivityAdvertisement.maximumRecordSize, target,
            "\(origin): txtRecord is \(record.count) bytes, over \(ActivityAdvertisement.maximumRecordSize)")
    let again: ActivityAdvertisement
    do { again = try ActivityAdvertisement(txtRecord: record) } catch {
        invariantFailed(target, "\(origin): its txtRecord \(hex(record)) does not parse: \(error)")
    }
    require(again.protocolVersion == advertisement.protocolVersion && again.agentID == advertisement.agentID
            && again.sequence == advertisement.sequence, target,
            "\(origin): v/id/seq changed: \(advertisement) became \(again)")
    require(again.current?.id == advertisement.current?.id && again.current?.activityType == advertisement.current?.activityType
            && again.current?.teamID == advertisement.current?.teamID,
            target, "\(origin): current activity changed: \(String(describing: advertisement.current)) became \(String(describing: again.current))")
    if let title = advertisement.current?.title {
        if let kept = again.current?.title {
            require(title.utf8.starts(with: kept.utf8), target, "\(origin): title \(hex(Array(title.utf8))) came back as \(hex(Array(kept.utf8))), not a prefix")
        } else {
            // Dropped: only when even "title=" does not fit in what the other strings leave.
            let others = record.count
            require(others + 1 + "title=".utf8.count > ActivityAdvertisement.maximumRecordSize, target,
                    "\(origin): title dropped although \(ActivityAdvertisement.maximumRecordSize - others) bytes were free")
        }
    } else {
        require(again.current?.title == nil, target, "\(origin): a title appeared")
    }
    require(again.txtRecord == record, target, "\(origin): txtRecord not stable: \(hex(record)) then \(hex(again.txtRecord))")
}
