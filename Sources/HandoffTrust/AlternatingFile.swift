#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import Synchronization

/// A private file rewritten often (the activities `handoff publish` keeps, at every publish and
/// resign), kept as two slots written in turn: each write overwrites the older slot in place.
///
/// Replacing a file atomically (``PrivateFiles/writeAtomically(_:to:durability:)``) creates a new
/// file, renames it over the old one and frees the old one's inode and blocks; on ext4 the rename
/// over an existing file also starts the new file's writeback at once (`auto_da_alloc`). For a
/// file of a few KB that is most of a write's CPU: the agent spends 0.6-0.8 ms less CPU on a
/// publish and a resign with slots (docs/BENCHMARKS.md, "The kept activities in two slots"). A
/// slot is opened, written from its start, cut to its length and closed: no new inode, no
/// rename, and the kernel writes the pages back in its own time.
///
/// Each slot holds one header line, then the content:
///
/// ```
/// handoff-slot 1 generation=7 length=3120 sha256=<64 hex digits>
/// <content>
/// ```
///
/// A write goes to the slot that does not hold the newest generation, with the next generation;
/// ``read()`` takes the valid slot of the highest generation. A slot cut short or mixed by a crash
/// during its write fails its length or its digest, and the other slot, one write older, is read
/// instead: the file is never read half-written. Like ``PrivateFiles/Durability/processRestart``,
/// the slots are not synced: after a power loss either may be lost.
///
/// Slots are files of mode 0600 of this user (``PrivateFiles/contents(_:)`` checks it on every
/// read; a write sets the mode again and refuses another user's file or a symbolic link).
///
/// `legacy`, the single file an earlier version kept instead, is read when neither slot exists,
/// and removed once a slot is written.
public final class AlternatingFile: Sendable {
    /// The two slots' paths.
    public let slots: [String]
    /// The file an earlier version kept (read while no slot exists), if any.
    public let legacy: String?

    /// Which slot holds the newest generation, and that generation; nil until the first read or
    /// write finds out. One write at a time: the caller serializes them (the agent's writer does).
    private let newest: Mutex<(slot: Int, generation: UInt64)?>

    /// `path.0` and `path.1`, replacing `legacy`.
    public init(path: String, legacy: String? = nil) {
        slots = [path + ".0", path + ".1"]
        self.legacy = legacy
        newest = Mutex(nil)
    }

    /// The content of the newest valid slot; that of `legacy` when no slot exists; nil when none
    /// of them exists.
    ///
    /// - Throws: ``TrustStoreError`` when a slot exists but none can be used (each slot's reason
    ///   given), or `legacy` cannot be read.
    public func read() throws(TrustStoreError) -> [UInt8]? {
        var best: (slot: Int, generation: UInt64, content: [UInt8])?
        var problems: [String] = []
        var found = false
        for (index, path) in slots.enumerated() {
            do {
                guard let bytes = try PrivateFiles.contents(path) else { continue }
                found = true
                let (generation, content) = try Self.unwrap(bytes, path: path)
                if generation > best?.generation ?? 0 { best = (index, generation, content) }
            } catch {
                found = true
                problems.append(error.message)
            }
        }
        if let best {
            newest.withLock { $0 = (best.slot, best.generation) }
            return best.content
        }
        newest.withLock { $0 = (1, 0) }  // the next write goes to slot 0, generation 1
        if found { throw TrustStoreError(problems.joined(separator: "; ")) }
        guard let legacy else { return nil }
        return try PrivateFiles.contents(legacy)
    }

    /// Writes `content` into the slot that does not hold the newest generation, then removes
    /// `legacy` (the first time). A failed write leaves the newest slot as it was.
    public func write(_ content: [UInt8]) throws(TrustStoreError) {
        let known = newest.withLock { $0 }
        let last: (slot: Int, generation: UInt64)
        if let known {
            last = known
        } else {
            _ = try? read()  // which slot is newest: read() records it, even when it throws
            last = newest.withLock { $0 } ?? (1, 0)
        }
        let slot = 1 - last.slot
        let generation = last.generation + 1
        try Self.overwrite(slots[slot], with: Self.wrap(content, generation: generation))
        newest.withLock { $0 = (slot, generation) }
        if last.generation == 0, let legacy, unlink(legacy) != 0, errno != ENOENT {
            throw TrustStoreError("cannot remove \(legacy), which an earlier version kept (\(String(cString: strerror(errno)))): remove it by hand")
        }
    }

    /// Moves every slot (and `legacy`) that exists aside (``PrivateFiles/moveAside(_:at:)``);
    /// returns where they went. The next write starts again at slot 0.
    public func moveAside(at seconds: Int64) -> [String] {
        newest.withLock { $0 = (1, 0) }
        return (slots + (legacy.map { [$0] } ?? [])).compactMap { path in
            access(path, F_OK) == 0 ? PrivateFiles.moveAside(path, at: seconds) : nil
        }
    }

    // MARK: The slot format

    static let magic = "handoff-slot 1"

    /// The header line and `content`.
    static func wrap(_ content: [UInt8], generation: UInt64) -> [UInt8] {
        let header = "\(magic) generation=\(generation) length=\(content.count) sha256=\(ContentDigest.hex(of: content))\n"
        return Array(header.utf8) + content
    }

    /// The generation and content of a slot's bytes.
    static func unwrap(_ bytes: [UInt8], path: String) throws(TrustStoreError) -> (generation: UInt64, content: [UInt8]) {
        guard let newline = bytes.prefix(256).firstIndex(of: UInt8(ascii: "\n")) else {
            throw TrustStoreError("\(path) has no slot header (cut short by a crash, or not a handoff file)")
        }
        let fields = String(decoding: bytes[..<newline], as: UTF8.self).split(separator: " ")
        var values: [Substring: Substring] = [:]
        for field in fields.dropFirst(2) {
            guard let equals = field.firstIndex(of: "=") else { continue }
            values[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard fields.prefix(2).joined(separator: " ") == magic, let generation = values["generation"].flatMap({ UInt64($0) }), generation > 0,
            let length = values["length"].flatMap({ Int($0) }), let digest = values["sha256"]
        else { throw TrustStoreError("\(path) has a slot header this handoff cannot read") }
        let start = newline + 1
        guard bytes.count - start >= length else {
            throw TrustStoreError("\(path) holds \(bytes.count - start) of its \(length) bytes (cut short by a crash)")
        }
        let content = Array(bytes[start..<(start + length)])
        guard ContentDigest.hex(of: content) == digest else {
            throw TrustStoreError("\(path) does not match its digest (a write cut short by a crash, or changed by hand)")
        }
        return (generation, content)
    }

    /// Writes `bytes` over the file at `path` from its start and cuts it to their length,
    /// creating it with mode 0600 if needed; refuses a symbolic link or another user's file.
    static func overwrite(_ path: String, with bytes: [UInt8]) throws(TrustStoreError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            let code = errno
            let hint = code == ELOOP ? "it is a symbolic link: remove it" : "check the directory is writable"
            throw TrustStoreError("cannot open \(path) (\(String(cString: strerror(code)))): \(hint)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == getuid() else {
            throw TrustStoreError("\(path) is not this user's (uid \(getuid())): refusing to write it; remove it")
        }
        var failure: Int32?
        if UInt32(info.st_mode) & 0o077 != 0, fchmod(fd, 0o600) != 0 { failure = errno }
        if failure == nil { failure = PrivateFiles.writeAll(bytes, to: fd) }
        if failure == nil, Int(info.st_size) > bytes.count, ftruncate(fd, off_t(bytes.count)) != 0 { failure = errno }
        if let failure {
            throw TrustStoreError("cannot write \(path) (\(String(cString: strerror(failure)))): check the disk has space and the directory is writable")
        }
    }
}
