import ArgumentParser
import HandoffCore
import HandoffTransport

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `handoff copy`: offers standard input, or a file, as this device's clipboard item.
struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Offer standard input (or a file) to your paired devices' clipboards for two minutes.",
        discussion: """
            The bytes stay on this host (up to config clipboard.maxBytes, 64 MiB by default) and go to \
            another host only when it runs `handoff paste`. A new copy replaces the item offered before.
            """)
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("The item's MIME type.", valueName: "mime"))
    var type: String = ClipboardItemInfo.defaultMimeType
    @Argument(help: "A file to offer, or - for standard input.")
    var file: String = "-"

    func validate() throws {
        if let problem = ClipboardItemInfo.mimeTypeProblem(type) { throw ValidationError("--type: \(problem)") }
    }

    func run() async throws {
        let fd = file == "-" ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("cannot read \(file): \(String(cString: strerror(errno)))") }
        defer { if fd != STDIN_FILENO { close(fd) } }
        // A regular file's size is known: the agent refuses one over its limit before any byte.
        var info = stat()
        let size = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
        switch await options.client.upload(.copy(mimeType: type, size: size), readingFrom: fd) {
        case .success(let answer):
            if options.json { print(answer.serialized); return }
            let result = CopyResult(json: answer)
            say("offered \(result.item?.size ?? 0) bytes of \(result.item?.mimeType ?? type) to your paired devices until \(result.expires)")
        case .failure(let error):
            options.report(error)
            throw ExitCode(1)
        }
    }
}

/// `handoff paste`: writes the newest clipboard item of a paired device to standard output.
struct Paste: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the newest clipboard item of a reachable paired device to standard output, byte for byte.",
        discussion: """
            Nothing is written unless every byte arrived and the SHA-256 matches. With --json, the item's \
            description (type, size, sha256, peer) goes to standard error; the bytes still go to standard output.
            """)
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("Paste the item of this device, as `handoff peers` shows it.", valueName: "peer"))
    var from: String?

    func run() async throws {
        let received = await options.client.download(.paste(from: from)) { PasteHeader(json: $0).item?.size ?? 0 }
        let answer: ByteStreamAnswer
        switch received {
        case .success(let value): answer = value
        case .failure(let error):
            options.report(error)
            throw ExitCode(1)
        }
        let header = PasteHeader(json: answer.answer)
        guard let item = header.item, answer.bytes.count == item.size, answer.sha256 == item.sha256 else {
            options.report(.handoffFailed("the item from \(header.peer) arrived damaged (its size or SHA-256 does not match); nothing was written"))
            throw ExitCode(1)
        }
        if options.json { FileHandle.standardError.write(Data((answer.answer.serialized + "\n").utf8)) }
        do { try ControlByteStream.writeAll(answer.bytes, to: STDOUT_FILENO) } catch {
            options.report(error)
            throw ExitCode(1)
        }
    }
}
