import Foundation
import HandoffTrust
import Testing

/// `PrivateFiles.writeAtomically`: a reader sees the old file or the new one, whichever durability
/// the caller asks for; only the fsyncs differ.
@Suite("PrivateFiles: atomic replacement")
struct PrivateFilesTests {
    @Test("each durability replaces the file whole, in mode 0600, and leaves no temporary file", arguments: [PrivateFiles.Durability.powerLoss, .processRestart])
    func replaces(durability: PrivateFiles.Durability) throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        let path = dir.file("state.json")
        try PrivateFiles.writeAtomically(Array("first".utf8), to: path, durability: durability)
        try PrivateFiles.writeAtomically(Array("second, longer".utf8), to: path, durability: durability)
        #expect(try PrivateFiles.contents(path) == Array("second, longer".utf8))
        #expect(try TemporaryDirectory.permissions(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["state.json"])
    }

    @Test("a directory that does not exist is a clear error naming it, and nothing is written")
    func missingDirectory() throws {
        let dir = TemporaryDirectory()
        for durability in [PrivateFiles.Durability.powerLoss, .processRestart] {
            #expect {
                try PrivateFiles.writeAtomically([1], to: dir.file("state.json"), durability: durability)
            } throws: { error in
                "\(error)".contains(dir.path) && "\(error)".contains("check the directory is writable")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path))
    }
}
