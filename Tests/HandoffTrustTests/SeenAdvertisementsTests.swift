import Foundation
import HandoffTrust
import Testing

/// Review finding 11: an equal timestamp was accepted, and the state was lost on restart.
@Suite("Seen advertisements: replays are refused, also after a restart")
struct SeenAdvertisementsTests {
    static func id(_ byte: UInt8) -> DeviceID { try! DeviceID(bytes: Array(repeating: byte, count: 32)) }

    @Test("newer is taken; the same record re-resolved on its instance is taken; equal elsewhere or older is a replay")
    func verdicts() {
        var seen = SeenAdvertisements()
        let v1 = seen.admit(Self.id(1), timestamp: 100, instanceName: "handoff-a")
        #expect(v1 == .fresh)
        let v2 = seen.admit(Self.id(1), timestamp: 100, instanceName: "handoff-a")
        #expect(v2 == .sameRecord)
        let last = SeenAdvertisements.Last(timestamp: 100, instanceName: "handoff-a")
        // The current record replayed under other names (another host's, a renamed one, case).
        for other in ["handoff-b", "handoff-a #2", "HANDOFF-A", ""] {
            let v3 = seen.admit(Self.id(1), timestamp: 100, instanceName: other)
            #expect(v3 == .replay(last: last))
        }
        let v4 = seen.admit(Self.id(1), timestamp: 99, instanceName: "handoff-a")
        #expect(v4 == .replay(last: last))
        let v5 = seen.admit(Self.id(1), timestamp: 0, instanceName: "handoff-b")
        #expect(v5 == .replay(last: last))
        // Other devices are independent.
        let v6 = seen.admit(Self.id(2), timestamp: 1, instanceName: "handoff-c")
        #expect(v6 == .fresh)
        // A device that restarted comes back newer under a new name.
        let v7 = seen.admit(Self.id(1), timestamp: 101, instanceName: "handoff-b")
        #expect(v7 == .fresh)
        let v8 = seen.admit(Self.id(1), timestamp: 100, instanceName: "handoff-a")
        #expect(v8 == .replay(last: .init(timestamp: 101, instanceName: "handoff-b")))
        #expect(seen.last[Self.id(1)] == .init(timestamp: 101, instanceName: "handoff-b"))
    }

    @Test("the largest timestamp is the last one: nothing is taken after it but itself")
    func largest() {
        var seen = SeenAdvertisements()
        let v9 = seen.admit(Self.id(1), timestamp: .max, instanceName: "x")
        #expect(v9 == .fresh)
        let v10 = seen.admit(Self.id(1), timestamp: .max, instanceName: "x")
        #expect(v10 == .sameRecord)
        let v11 = seen.admit(Self.id(1), timestamp: .max, instanceName: "y")
        #expect(v11 != .fresh)
    }

    @Test("forgetting a device (unpaired) takes its records afresh")
    func forget() {
        var seen = SeenAdvertisements()
        _ = seen.admit(Self.id(1), timestamp: 100, instanceName: "a")
        let forgotten = seen.forget(Self.id(1))
        let again = seen.forget(Self.id(1))
        #expect(forgotten)
        #expect(!again)
        let v12 = seen.admit(Self.id(1), timestamp: 50, instanceName: "a")
        #expect(v12 == .fresh)
    }

    @Test("saved state survives a reload: a replay is still a replay, in a private file")
    func persisted() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        #expect(try SeenAdvertisements.load(directory: dir.path) == SeenAdvertisements())
        var seen = SeenAdvertisements()
        _ = seen.admit(Self.id(1), timestamp: 1_746_100_800_123, instanceName: "handoff-0123456789ab")
        _ = seen.admit(Self.id(2), timestamp: UInt64.max, instanceName: "handoff-é \"quoted\"")
        try seen.save(directory: dir.path)
        #expect(try TemporaryDirectory.permissions(dir.file(SeenAdvertisements.fileName)) == 0o600)
        var reloaded = try SeenAdvertisements.load(directory: dir.path)
        #expect(reloaded == seen)
        let v13 = reloaded.admit(Self.id(1), timestamp: 1_746_100_800_123, instanceName: "handoff-other")
        #expect(v13 != .fresh)
        let v14 = reloaded.admit(Self.id(1), timestamp: 1_746_100_800_000, instanceName: "handoff-0123456789ab")
        #expect(v14 != .fresh)
        let v15 = reloaded.admit(Self.id(1), timestamp: 1_746_100_800_123, instanceName: "handoff-0123456789ab")
        #expect(v15 == .sameRecord)
        // Saving again replaces the file; no temporary files are left.
        try reloaded.save(directory: dir.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [SeenAdvertisements.fileName])
    }

    @Test("a corrupt file is refused with what to do", arguments: [
        "not json", #"{"version": 2, "devices": {}}"#, #"{"version": 1, "devices": {"nope": {"timestamp": 1, "instanceName": "x"}}}"#,
        #"{"version": 1, "devices": {"AAAAAAA": {"timestamp": -1, "instanceName": "x"}}}"#,
    ])
    func corrupt(_ text: String) throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        // Private, as the agent writes it: only the contents are wrong.
        try dir.create()
        try dir.write(SeenAdvertisements.fileName, Data(text.utf8))
        let error = #expect(throws: TrustStoreError.self) { try SeenAdvertisements.load(directory: dir.path) }
        #expect(error?.message.contains("remove it") == true)
        #expect(error?.message.contains(SeenAdvertisements.fileName) == true)
    }
}
