import Foundation
import HandoffTrust
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `handoff send`'s resume key: taken from `stat`, without reading the file, and another for a
/// file that changed (issue 19, item 3), so that a stale partial copy is never continued.
@Suite("FileResumeKey: a file's key for resuming, from its identity")
struct FileResumeKeyTests {
    func key(_ path: String, as relative: String = "a.bin") throws -> String {
        var info = stat()
        try #require(stat(path, &info) == 0)
        return FileResumeKey.hex(path: relative, status: info)
    }

    /// Sets the file's modification time, to the nanosecond.
    func setModified(_ path: String, seconds: Int, nanoseconds: Int) throws {
        var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test func theSameFileKeepsItsKeyAndItIsHex() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        try dir.write("a.bin", Data(repeating: 7, count: 1000))
        let first = try key(dir.file("a.bin"))
        #expect(first.utf8.count == 64 && first.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        #expect(try key(dir.file("a.bin")) == first, "nothing changed: the same key, and a send resumes")
        #expect(try key(dir.file("a.bin"), as: "other/a.bin") != first, "another path in the send: another partial copy")
    }

    @Test func aChangedFileGetsANewKey() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        let path = dir.file("a.bin")
        try dir.write("a.bin", Data(repeating: 7, count: 1000))
        try setModified(path, seconds: 1_800_000_000, nanoseconds: 1)
        let original = try key(path)

        // Rewritten in place, the same size: a new modification time (here 1 ns later).
        try setModified(path, seconds: 1_800_000_000, nanoseconds: 2)
        let rewritten = try key(path)
        #expect(rewritten != original)

        // Grown, with the time set back: another size.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1]))
        try handle.close()
        try setModified(path, seconds: 1_800_000_000, nanoseconds: 1)
        let grown = try key(path)
        #expect(grown != original)

        // Replaced by another file of the same size and time: another inode.
        try Data(repeating: 8, count: 1000).write(to: URL(fileURLWithPath: dir.file("new.bin")))
        try setModified(dir.file("new.bin"), seconds: 1_800_000_000, nanoseconds: 1)
        var before = stat(), after = stat()
        try #require(stat(path, &before) == 0)
        try #require(rename(dir.file("new.bin"), path) == 0)
        try #require(stat(path, &after) == 0)
        #expect(after.st_ino != before.st_ino && after.st_size == 1000 && after.modificationTime.tv_nsec == 1)
        #expect(try key(path) != original)
        #expect(Set([original, rewritten, grown, try key(path)]).count == 4)
    }

    /// `stat`'s modification time under one name (glibc's `st_mtim`, Darwin's `st_mtimespec`).
    @Test func theModificationTimeIsReadToTheNanosecond() throws {
        let dir = TemporaryDirectory()
        try dir.create()
        defer { dir.remove() }
        try dir.write("a.bin", Data(repeating: 7, count: 10))
        try setModified(dir.file("a.bin"), seconds: 1_800_000_000, nanoseconds: 123_456_789)
        var info = stat()
        try #require(stat(dir.file("a.bin"), &info) == 0)
        #expect(info.modificationTime.tv_sec == 1_800_000_000 && info.modificationTime.tv_nsec == 123_456_789)
    }

    @Test func everyPartOfTheIdentityCounts() {
        let base = FileResumeKey.hex(path: "a.bin", size: 10, modifiedNanoseconds: 5, inode: 42, filesystem: 3)
        #expect(base == FileResumeKey.hex(path: "a.bin", size: 10, modifiedNanoseconds: 5, inode: 42, filesystem: 3))
        #expect(base != FileResumeKey.hex(path: "b.bin", size: 10, modifiedNanoseconds: 5, inode: 42, filesystem: 3))
        #expect(base != FileResumeKey.hex(path: "a.bin", size: 11, modifiedNanoseconds: 5, inode: 42, filesystem: 3))
        #expect(base != FileResumeKey.hex(path: "a.bin", size: 10, modifiedNanoseconds: 6, inode: 42, filesystem: 3))
        #expect(base != FileResumeKey.hex(path: "a.bin", size: 10, modifiedNanoseconds: 5, inode: 43, filesystem: 3))
        #expect(base != FileResumeKey.hex(path: "a.bin", size: 10, modifiedNanoseconds: 5, inode: 42, filesystem: 4))
        // Lengths first: a path ending in a digit does not run into the size.
        #expect(FileResumeKey.hex(path: "a1", size: 0, modifiedNanoseconds: 5, inode: 42, filesystem: 3)
                    != FileResumeKey.hex(path: "a", size: 10, modifiedNanoseconds: 5, inode: 42, filesystem: 3))
    }
}
