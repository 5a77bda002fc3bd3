import Foundation
import Testing

@testable import HandoffTrust

/// `AlternatingFile`: writes go to the older of two slots in turn, a read takes the newest whole
/// slot, and a slot cut short by a crash is passed over for the other.
@Suite("AlternatingFile: two slots written in turn")
struct AlternatingFileTests {
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("writes alternate between the slots, each read (by this instance or a new one) gives the newest, in mode 0600")
    func alternates() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        let file = AlternatingFile(path: dir.file("state"))
        #expect(try file.read() == nil)
        for (index, text) in ["first, the longest of all", "second", "third"].enumerated() {
            try file.write(bytes(text))
            #expect(try file.read() == bytes(text))
            #expect(try AlternatingFile(path: dir.file("state")).read() == bytes(text))
            let slot = try #require(try PrivateFiles.contents(file.slots[index % 2]))
            #expect(try AlternatingFile.unwrap(slot, path: "slot").generation == UInt64(index + 1))
        }
        #expect(try TemporaryDirectory.permissions(file.slots[0]) == 0o600)
        #expect(try TemporaryDirectory.permissions(file.slots[1]) == 0o600)
        // The slot overwritten with shorter content is cut to its length.
        #expect(try PrivateFiles.contents(file.slots[0]) == AlternatingFile.wrap(bytes("third"), generation: 3))
        // A new instance continues after the newest generation, in the other slot.
        let again = AlternatingFile(path: dir.file("state"))
        try again.write(bytes("fourth"))
        #expect(try PrivateFiles.contents(file.slots[1]) == AlternatingFile.wrap(bytes("fourth"), generation: 4))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["state.0", "state.1"])
    }

    @Test("a newest slot cut short, mixed with older bytes, or emptied is passed over for the other, which the next write keeps",
          arguments: ["cut", "mixed", "empty"])
    func tornSlot(damage: String) throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        let file = AlternatingFile(path: dir.file("state"))
        try file.write(bytes(String(repeating: "older ", count: 100)))
        try file.write(bytes(String(repeating: "newer ", count: 100)))
        var slot = try #require(try PrivateFiles.contents(file.slots[1]))
        switch damage {
        case "cut": slot.removeLast(10)
        case "mixed": slot.replaceSubrange((slot.count - 12)..<(slot.count - 6), with: bytes("older "))
        default: slot = []
        }
        try dir.write("state.1", Data(slot))
        let reader = AlternatingFile(path: dir.file("state"))
        #expect(try reader.read() == bytes(String(repeating: "older ", count: 100)))
        // The next write goes over the damaged slot, not over the whole one.
        try reader.write(bytes("next"))
        #expect(try AlternatingFile(path: dir.file("state")).read() == bytes("next"))
        #expect(try AlternatingFile.unwrap(try #require(try PrivateFiles.contents(file.slots[0])), path: "slot").content == bytes(String(repeating: "older ", count: 100)))
    }

    @Test("bytes after a slot's length (a crash before it was cut) are ignored")
    func trailingBytes() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        let file = AlternatingFile(path: dir.file("state"))
        try file.write(bytes("whole"))
        try dir.write("state.0", Data(AlternatingFile.wrap(bytes("whole"), generation: 1) + bytes("left over from a longer write")))
        #expect(try AlternatingFile(path: dir.file("state")).read() == bytes("whole"))
    }

    @Test("when no slot can be used, the read says why for each, and moving them aside starts again at slot 0")
    func noSlotUsable() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        try dir.write("state.0", Data("not a slot".utf8))
        try dir.write("state.1", Data(AlternatingFile.wrap(bytes("content"), generation: 2).dropLast()))
        let file = AlternatingFile(path: dir.file("state"))
        #expect {
            try file.read()
        } throws: { error in
            "\(error)".contains("state.0 has no slot header") && "\(error)".contains("state.1 holds 6 of its 7 bytes")
        }
        let aside = file.moveAside(at: 1234)
        #expect(aside == [dir.file("state.0.unreadable-1234"), dir.file("state.1.unreadable-1234")])
        #expect(try file.read() == nil)
        try file.write(bytes("fresh"))
        #expect(try PrivateFiles.contents(file.slots[0]) == AlternatingFile.wrap(bytes("fresh"), generation: 1))
    }

    @Test("the file an earlier version kept is read while no slot exists, and removed by the first write")
    func legacy() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        try dir.write("state.json", Data("kept before".utf8))
        let file = AlternatingFile(path: dir.file("state"), legacy: dir.file("state.json"))
        #expect(try file.read() == bytes("kept before"))
        try file.write(bytes("kept now"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("state.json")))
        #expect(try AlternatingFile(path: dir.file("state"), legacy: dir.file("state.json")).read() == bytes("kept now"))
    }

    @Test("a slot others may read is refused when read and made 0600 when written; a symbolic link is never written through")
    func permissionsAndLinks() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        let file = AlternatingFile(path: dir.file("state"))
        try dir.write("state.0", Data(AlternatingFile.wrap(bytes("planted"), generation: 1)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: dir.file("state.0"))
        #expect { try file.read() } throws: { "\($0)".contains("has mode 644") }
        try file.write(bytes("mine"))
        #expect(try TemporaryDirectory.permissions(dir.file("state.0")) == 0o600)
        #expect(try file.read() == bytes("mine"))

        try FileManager.default.createSymbolicLink(atPath: dir.file("state.1"), withDestinationPath: dir.file("elsewhere"))
        #expect { try file.write(bytes("next")) } throws: { "\($0)".contains("symbolic link") }
        #expect(!FileManager.default.fileExists(atPath: dir.file("elsewhere")))
        #expect(try file.read() == bytes("mine"), "the failed write left the newest slot as it was")
    }
}
