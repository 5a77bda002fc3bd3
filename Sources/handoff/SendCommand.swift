import ArgumentParser
import HandoffCore
import HandoffTransport
import HandoffTrust
import NIOCore

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send files, folders or standard input (-) to a paired device's download directory.",
        discussion: """
            The files land in the device's download directory (its receive.directory, else xdg-user-dir DOWNLOAD), \
            each complete and checked by SHA-256, never over another file. Sending again after a break resumes \
            from what arrived. On a terminal a progress bar shows on standard error; --json prints progress \
            events as JSON lines. Exits 0 when every file arrived.
            """)
    @OptionGroup var options: GlobalOptions
    @Option(name: .long, help: ArgumentHelp("The paired device's name, as `handoff peers` shows it.", valueName: "peer"))
    var to: String
    @Option(name: .long, help: ArgumentHelp("The name standard input is saved under.", valueName: "name"))
    var name = "stdin"
    @Argument(help: "Files and folders to send; - is standard input.") var paths: [String]

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("name at least one file, folder or -") }
        guard paths.filter({ $0 == "-" }).count <= 1 else { throw ValidationError("standard input (-) can be sent once") }
    }

    func run() async throws {
        let source: SendSource
        do { source = try SendSource.collect(paths, stdinName: name) } catch { throw ValidationError("\(error)") }
        guard !source.items.isEmpty else { throw ValidationError("there is no file to send in \(paths.joined(separator: " "))") }
        let offer = FileOffer(files: source.items.map(\.offered))
        let outcome: Result<(files: Int, bytes: Int), HandoffError>
        do {
            let channel = try await StreamChannels.connect(controlSocket: options.socketPath)
            outcome = try await channel.executeThenClose { inbound, outbound in
                try await FileSender(source: source, offer: offer, json: options.json, channel: channel.channel)
                    .run(peer: to, inbound: inbound, outbound: outbound)
            }
        } catch {
            outcome = .failure(.connectionUnavailable("cannot reach the handoff agent at \(options.socketPath): \(error)"))
        }
        if case .failure(let error) = outcome {
            options.report(error)
            throw ExitCode(1)
        }
    }
}

/// The CLI's side of a file send, once connected to its agent: the request, then each file's
/// frames (written straight from the file into the connection's buffers), while the receiver's
/// receipts are read.
struct FileSender {
    let source: SendSource
    let offer: FileOffer
    let json: Bool
    /// The connection to the agent, which the files' frames are written to.
    let channel: any Channel
    var allocator: ByteBufferAllocator { channel.allocator }

    /// Data frames' payload, as continuation streams use.
    static let chunkSize = 60 * 1024
    /// Frames per write.
    static let framesPerBatch = 16

    func run(peer: String, inbound: NIOAsyncChannelInboundStream<EncodedFrame>, outbound: NIOAsyncChannelOutboundWriter<EncodedFrame>) async throws
        -> Result<(files: Int, bytes: Int), HandoffError>
    {
        try await outbound.write(EncodedFrame(Frame(kind: .controlRequest, payload: ControlRequest.sendFiles(peer: peer, offer: offer).json.serializedBytes),
                                              allocator: allocator))
        var frames = inbound.makeAsyncIterator()
        guard let first = try await frames.next()?.frame else { return .failure(.connectionUnavailable("the agent closed the connection")) }
        let starts: [Int]
        switch try ControlProtocol.decodeResponse(first) {
        case .failure(let error): return .failure(error)
        case .success(let body): starts = SendFilesResult(json: body).starts
        }
        guard starts.count == source.items.count else { return .failure(.handoffFailed("the receiver answered for \(starts.count) of \(source.items.count) files")) }
        let remaining = zip(source.items, starts).reduce(0) { $0 + max(0, ($1.0.offered.size ?? 0) - $1.1) }
        let progress = TransferProgress(total: source.items.contains { $0.localPath == nil } ? nil : remaining, json: json)
        // The files are written in a child task while this one reads the receipts: a receiver
        // that refuses a file says so at once, and the send stops.
        async let written = Self.write(source.items, from: starts, to: outbound, channel: channel, progress: progress)
        let received = await Self.receipts(&frames, count: source.items.count, progress: progress)
        if case .failure = received {
            progress.clearBar()
            if let error = await written { return .failure(error) }
        }
        return received
    }

    /// Writes every file, then `streamEnd`; returns why it stopped early when the CLI could not
    /// read a file (nil otherwise, also when the connection broke: the receipts say why).
    private static func write(_ items: [SendSource.Item], from starts: [Int], to outbound: NIOAsyncChannelOutboundWriter<EncodedFrame>,
                              channel: any Channel, progress: TransferProgress) async -> HandoffError? {
        do {
            for (item, start) in zip(items, starts) { try await send(item, from: start, to: outbound, channel: channel, progress: progress) }
            try await outbound.write(EncodedFrame(Frame(kind: .streamEnd, payload: []), allocator: channel.allocator))
            return nil
        } catch let error as SendError {
            outbound.finish()  // the send ends without its streamEnd: the receiver keeps no file
            return .handoffFailed(error.description)
        } catch {
            return nil
        }
    }

    /// Reads the receiver's receipts until its end.
    private static func receipts(_ frames: inout NIOAsyncChannelInboundStream<EncodedFrame>.AsyncIterator, count: Int, progress: TransferProgress) async
        -> Result<(files: Int, bytes: Int), HandoffError>
    {
        var kept = 0
        var bytes = 0
        do {
            while let frame = try await frames.next()?.frame {
                switch frame.kind {
                case .streamEnd:
                    guard kept == count else { return .failure(.handoffFailed("the receiver ended the send after \(kept) of \(count) files")) }
                    progress.done(files: kept, bytes: bytes)
                    return .success((kept, bytes))
                case .fileReceived:
                    guard case .files(.received(let receipt)) = try PeerMessage(frame: frame) else { continue }
                    progress.file(receipt)
                    if let error = receipt.error { return .failure(error) }
                    kept += 1
                    bytes += receipt.start + receipt.bytes
                case .error, .controlResponse:
                    if case .error(let code, let message) = try? PeerMessage(frame: frame) { return .failure(HandoffError(HandoffError.Code(rawValue: code), message)) }
                    return .failure(ControlProtocol.error(fromJSON: try? JSONValue(parsing: frame.payload)))
                default:
                    return .failure(.handoffFailed("the send broke: an unexpected \(frame.kind) frame"))
                }
            }
            return .failure(.connectionUnavailable("the send broke after \(kept) of \(count) files: the receiver or the agent went away"))
        } catch {
            return .failure(.connectionUnavailable("the send broke after \(kept) of \(count) files: \(error)"))
        }
    }

    /// Writes one file's data from `start`, then its `fileEnd` with the SHA-256 of the whole file,
    /// taken as it is read (a resumed file's first `start` bytes are read and hashed first). A file
    /// that is not the one offered any more (another resume key: a new size, time or inode), before
    /// or after its bytes went, stops the send.
    private static func send(_ item: SendSource.Item, from start: Int, to outbound: NIOAsyncChannelOutboundWriter<EncodedFrame>,
                             channel: any Channel, progress: TransferProgress) async throws {
        let fd: Int32
        var digest = ContentDigest()
        if let path = item.localPath {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SendError("cannot read \(path): \(String(cString: strerror(errno)))") }
        } else {
            fd = dup(STDIN_FILENO)
        }
        defer { close(fd) }
        if let path = item.localPath {
            try checkUnchanged(fd, item)
            guard digest.update(readingFirst: start, of: fd), lseek(fd, off_t(start), SEEK_SET) == off_t(start) else {
                throw SendError("cannot read \(path) from byte \(start)")
            }
        }
        digest = try await writeData(from: fd, bytes: item.offered.size.map { $0 - start }, hashing: digest,
                                     named: item.localPath ?? "standard input", to: channel, progress: progress) ?? digest
        if item.localPath != nil { try checkUnchanged(fd, item) }
        try await outbound.write(EncodedFrame(PeerMessage.files(.fileEnd(sha256: digest.hex())).frame, allocator: channel.allocator))
    }

    /// Throws when the file open at `fd` is no longer the one `item` offered.
    private static func checkUnchanged(_ fd: Int32, _ item: SendSource.Item) throws {
        var info = stat()
        guard fstat(fd, &info) == 0, FileResumeKey.hex(path: item.offered.path, status: info) == item.offered.resumeKey else {
            throw SendError("\(item.localPath ?? item.offered.path) changed while it was sent (its size, modification time or inode); send it again")
        }
    }

    /// Writes `bytes` of `fd` (to its end when nil) as stream data frames, read straight into the
    /// connection's buffers, 16 frames per write; the write waits while the agent is behind.
    /// With a `hashing` digest, returns it with every byte written added (nil without one).
    ///
    /// The batches go straight to the channel, two in flight at most (as HandoffKit's stream
    /// output does): waiting for the channel's writability after each batch drained the path
    /// between batches. A batch is hashed once it is handed to the channel, while it travels.
    /// Everything written is out when it returns.
    static func writeData(from fd: Int32, bytes: Int?, hashing: ContentDigest?, named name: String, to channel: any Channel,
                          progress: TransferProgress?) async throws -> ContentDigest? {
        let allocator = channel.allocator
        var inFlight: [EventLoopFuture<Void>] = []
        var digest = hashing
        var remaining = bytes
        var ended = false
        while !ended {
            var buffer = allocator.buffer(capacity: framesPerBatch * (Frame.headerSize + chunkSize))
            var payloads: [Range<Int>] = []
            for _ in 0..<framesPerBatch {
                let want = min(chunkSize, remaining ?? chunkSize)
                if want == 0 { ended = true; break }
                let header = buffer.writerIndex
                buffer.writeFrameHeader(kind: .streamData, payloadCount: 0)
                var failure: Int32 = 0
                let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { space in
                    while true {
                        let count = read(fd, space.baseAddress!, want)
                        if count >= 0 { return count }
                        if errno != EINTR { failure = errno; return 0 }
                    }
                }
                guard failure == 0 else { throw SendError("cannot read \(name): \(String(cString: strerror(failure)))") }
                if n == 0 {
                    buffer.moveWriterIndex(to: header)
                    guard remaining == nil else { throw SendError("\(name) got shorter while it was sent") }
                    ended = true
                    break
                }
                buffer.setInteger(UInt32(n), at: header + 1, endianness: .big)
                payloads.append((header + Frame.headerSize)..<buffer.writerIndex)
                remaining = remaining.map { $0 - n }
                progress?.add(n)
            }
            if buffer.readableBytes > 0 {
                if inFlight.count == 2 { try await inFlight.removeFirst().get() }
                let frames = EncodedFrame.frames(in: buffer)
                let written = channel.eventLoop.makePromise(of: Void.self)
                channel.eventLoop.execute {
                    for frame in frames.dropLast() { channel.write(frame, promise: nil) }
                    channel.writeAndFlush(frames.last!, promise: written)
                }
                inFlight.append(written.futureResult)
            }
            if digest != nil {
                // The channel only reads the batch's bytes too: hashing them now is safe.
                buffer.withUnsafeReadableBytes { bytes in
                    for payload in payloads { digest!.update(UnsafeRawBufferPointer(rebasing: bytes[payload])) }
                }
            }
        }
        for written in inFlight { try await written.get() }
        return digest
    }
}
