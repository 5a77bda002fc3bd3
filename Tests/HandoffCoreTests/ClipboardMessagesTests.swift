import Foundation
import Testing

@testable import HandoffCore

@Suite("Clipboard: sightings, frames, advertisement and requests")
struct ClipboardMessagesTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("paste takes the item seen last, or the named device's; an item no longer advertised is forgotten")
    func newestSighting() {
        var sightings = ClipboardSightings()
        let a = UUID(), b = UUID()
        #expect(sightings.newest() == nil)
        #expect(sightings.observe([(a, "h1")], at: t0).map(\.itemID) == [a])
        #expect(sightings.observe([(a, "h1"), (b, "h3")], at: t0 + 5).map(\.itemID) == [b])
        #expect(sightings.newest()?.itemID == b)
        #expect(sightings.newest(from: "h1")?.itemID == a)
        #expect(sightings.newest(from: "h2") == nil)
        // Seen again later, h1's item keeps its first sighting: h3's stays the newest.
        sightings.observe([(a, "h1"), (b, "h3")], at: t0 + 9)
        #expect(sightings.newest()?.itemID == b)
        #expect(sightings.newest(from: "h1")?.firstSeen == t0)
        // h3's item expired (no longer advertised).
        sightings.observe([(a, "h1")], at: t0 + 10)
        #expect(sightings.newest()?.itemID == a)
        #expect(sightings.all.count == 1)
    }

    @Test("clipboardFetch and clipboardItem frames round-trip; a malformed item is refused")
    func frames() throws {
        let item = ClipboardItemInfo(mimeType: "image/png", size: 3, sha256: String(repeating: "ab", count: 32))
        let id = UUID()
        #expect(try PeerMessage(frame: PeerMessage.clipboardFetch(itemID: id).frame) == .clipboardFetch(itemID: id))
        #expect(try PeerMessage(frame: PeerMessage.clipboardItem(item).frame) == .clipboardItem(item))
        #expect(PeerMessage.clipboardFetch(itemID: id).frame.kind.rawValue == 0x40)
        #expect(PeerMessage.clipboardItem(item).frame.kind.rawValue == 0x41)
        var fields = item.propertyList
        fields["sha256"] = .string("xyz")
        let bad = Frame(kind: .clipboardItem, payload: PropertyListBinaryCoding.encode(fields))
        #expect(throws: FrameError.self) { try PeerMessage(frame: bad) }
    }

    @Test("the advertisement carries the clipboard item's ID beside the current activity")
    func advertisement() throws {
        let clip = UUID()
        let current = ActivityAdvertisement.Current(id: UUID(), activityType: ActivityType(rawValue: "com.example.notes.edit")!, title: "Notes")
        let ad = ActivityAdvertisement(agentID: "a1", sequence: 4, current: current, name: "h1", clipboard: clip)
        let read = try ActivityAdvertisement(txtRecord: ad.txtRecord)
        #expect(read.clipboard == clip)
        #expect(read.current == current)
        #expect(try ActivityAdvertisement(txtRecord: ActivityAdvertisement(agentID: "a1", sequence: 1, current: nil).txtRecord).clipboard == nil)
        let bad = TXTRecordEncoding.rdata([Array("v=2".utf8), Array("id=a1".utf8), Array("seq=1".utf8), Array("cid=nope".utf8)])
        #expect(throws: AdvertisementError.self) { try ActivityAdvertisement(txtRecord: bad) }
    }

    @Test("copy and paste requests round-trip; copy checks its MIME type; the reserved type is known")
    func requests() throws {
        for request in [ControlRequest.copy(mimeType: "text/plain", size: 12), .copy(mimeType: "image/png", size: nil), .paste(from: "h1"), .paste(from: nil)] {
            #expect(try ControlRequest(json: request.json) == request)
            #expect(request.startsByteStream)
        }
        #expect(try ControlRequest(json: .object(["command": .string("copy")])) == .copy(mimeType: "text/plain", size: nil))
        #expect(throws: HandoffError.self) { try ControlRequest(json: .object(["command": .string("copy"), "type": .string("not a type")])) }
        #expect(!ControlRequest.status.startsByteStream)
        #expect(ActivityType.clipboard.isClipboard)
        #expect(ActivityType(rawValue: "org.handoff.clipboard") == .clipboard)
    }
}
