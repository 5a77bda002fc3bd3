import HandoffCore
import HandoffTrust

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `handoff send` sends: each file found under the paths given (a folder's files keep their
/// place under the folder's name), or standard input, with what the offer says of it.
struct SendSource {
    /// One file of the send.
    struct Item {
        /// Where the CLI reads it; nil for standard input.
        var localPath: String?
        var offered: OfferedFile
    }

    var items: [Item]

    /// Collects `paths` (`-` is standard input, named `stdinName`). No file is read here: each is
    /// offered under its resume key (``FileResumeKey``, from what `stat` says of it), by which the
    /// receiver finds a partial copy to resume from; its SHA-256 is taken while it is sent.
    static func collect(_ paths: [String], stdinName: String) throws -> SendSource {
        var items: [Item] = []
        for path in paths {
            if path == "-" {
                items.append(Item(localPath: nil, offered: OfferedFile(path: stdinName, size: nil, mode: 0o644)))
                continue
            }
            var info = stat()
            guard stat(path, &info) == 0 else { throw SendError("cannot read \(path): \(String(cString: strerror(errno)))") }
            let base = (path as NSString).standardizingPath
            let name = (base as NSString).lastPathComponent
            if (info.st_mode & S_IFMT) == S_IFDIR {
                try walk(directory: base, as: name, into: &items)
            } else {
                items.append(try item(base, as: name, info: info))
            }
        }
        guard items.count <= FileOffer.maximumFiles else { throw SendError("a send holds at most \(FileOffer.maximumFiles) files") }
        return SendSource(items: items)
    }

    private static func walk(directory: String, as relative: String, into items: inout [Item]) throws {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted() } catch {
            throw SendError("cannot read the folder \(directory): \(error.localizedDescription)")
        }
        for name in names {
            let path = directory + "/" + name
            var info = stat()
            // Symbolic links inside a folder are not followed: a tree sends what is in it.
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: try walk(directory: path, as: relative + "/" + name, into: &items)
            case S_IFREG: items.append(try item(path, as: relative + "/" + name, info: info))
            default: continue
            }
        }
    }

    private static func item(_ path: String, as relative: String, info: stat) throws -> Item {
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw SendError("\(path) is not a file or a folder") }
        return Item(localPath: path, offered: OfferedFile(path: relative, size: Int(info.st_size), mode: Int(info.st_mode & 0o7777),
                                                          resumeKey: FileResumeKey.hex(path: relative, status: info)))
    }
}

/// A send that cannot start or go on, for the person who typed it.
struct SendError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
