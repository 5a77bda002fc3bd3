import HandoffCore
import HandoffTransport
import HandoffTrust
import Logging
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The receiving side of `handoff send` (docs/PROTOCOL.md, "Sending files"), on a paired
/// device's peer connection: the offer is answered (``FileOfferDecision``), then each file's
/// bytes are written to its partial file and hashed in the connection's pipeline
/// (``FileSinkHandler``), checked against its SHA-256, fsynced once (per file, before it is
/// linked: no fsync per chunk) and linked into the download directory (``DownloadDirectory``),
/// and a `fileReceived` receipt goes back.
///
/// A file that breaks off stays as a partial file (if it can resume: a known size and resume key)
/// for the next send of it; a file whose SHA-256 does not match the one its `fileEnd` brings is
/// discarded, partial file and all, and says so. The send ends at the first file not kept.
enum FileReceiver {
    /// Answers `offer` and receives its files; returns once the send is over.
    static func receive<I: AsyncIteratorProtocol>(_ offer: FileOffer, inbound: inout I, outbound: NIOAsyncChannelOutboundWriter<Frame>,
                                                  splice: StreamSplice, peer: String, device: DeviceID?, agent: Agent, logger: Logger) async throws where I.Element == Frame {
        let configuration = agent.configuration
        let receiving = configuration.receive
        func refuse(_ error: HandoffError) async throws {
            logger.info("refused files", metadata: ["handoff.peer": "\(peer)", "handoff.error": "\(error)"])
            try await outbound.write(PeerMessage.error(code: error.code.rawValue, message: error.message).frame)
        }
        guard let device else { return try await refuse(.connectionUnavailable("only a paired device may send files")) }
        var directory: DownloadDirectory?
        if receiving.enabled {
            let path = DownloadDirectory.resolve(configured: receiving.directory)
            do { directory = try DownloadDirectory(path: path) } catch {
                return try await refuse(.handoffFailed("\(configuration.name) cannot receive files: \(error)"))
            }
            directory?.sweep()
        }
        let partialNames = offer.files.map { PartialFileKey.text(device: device.description, file: $0).map { ContentDigest.hex(of: $0.utf8) } }
        let lengths = partialNames.map { name in name.flatMap { directory?.partialLength(named: $0) } }
        let decision: FileOfferDecision
        switch FileOfferDecision.decide(offer, from: peer, receiver: configuration.name, policy: receiving.policy,
                                        partialLengths: lengths, freeBytes: directory?.freeBytes) {
        case .failure(let error): return try await refuse(error)
        case .success(let taken): decision = taken
        }
        guard let directory else { return }
        // The files' data goes to the sink from the first byte after the answer: the sender
        // sends none before it.
        let sink = try await FileSinkHandler.install(on: splice)
        try await outbound.write(PeerMessage.files(.answer(starts: decision.starts)).frame)
        logger.info("receiving files", metadata: [
            "handoff.peer": "\(peer)", "handoff.files": "\(offer.files.count)", "handoff.starts": "\(decision.starts)",
        ])

        var kept = 0
        var keptBytes = 0
        var budget = receiving.maxBytes - offer.knownBytes  // what standard input may still bring
        for (index, file) in offer.files.enumerated() {
            var target = Target(index: index, file: file, path: decision.paths[index], start: decision.starts[index],
                                partialName: partialNames[index] ?? "stdin-\(UUID.random().uuidString)")
            let receipt = await receiveFile(&target, sink: sink, directory: directory, budget: &budget, peer: peer)
            logger.info("file received", metadata: [
                "handoff.peer": "\(peer)", "handoff.name": "\(receipt.name)", "handoff.start": "\(receipt.start)",
                "handoff.bytes": "\(receipt.bytes)", "handoff.error": "\(receipt.error?.description ?? "none")",
            ])
            try await outbound.write(PeerMessage.files(.received(receipt)).frame)
            guard receipt.error == nil else {
                try await outbound.write(PeerMessage.streamEnd.frame)
                return
            }
            kept += 1
            keptBytes += receipt.start + receipt.bytes
        }
        await sink.stop()
        guard let end = try await inbound.next(), end.kind == .streamEnd else { return }
        try await outbound.write(PeerMessage.streamEnd.frame)
        let received = ReceivedFiles(id: UUID.random(), peer: peer, files: kept, bytes: keptBytes, directory: directory.path)
        agent.events.publish([AgentEvent(.filesReceived(received), at: agent.wallClock())])
    }

    /// One file of the send, as the receiver places it.
    struct Target {
        var index: Int
        var file: OfferedFile
        var path: ReceivedPath
        var start: Int
        var partialName: String
    }

    /// Receives one file's bytes up to its `fileEnd` (through `sink`), and places it. A broken
    /// connection leaves the partial file if the file can resume; a file not kept comes back as a
    /// receipt with its error.
    static func receiveFile(_ target: inout Target, sink: FileSinkHandler, directory: DownloadDirectory,
                                    budget: inout Int, peer: String) async -> FileReceipt {
        let file = target.file
        func failed(_ error: HandoffError, bytes: Int = 0) -> FileReceipt {
            directory.removePartial(named: target.partialName)
            return FileReceipt(index: target.index, name: "", start: target.start, bytes: bytes, error: error)
        }
        let fd: Int32
        do { fd = try directory.openPartial(named: target.partialName) } catch { return failed(.handoffFailed("\(error)")) }
        defer { close(fd) }
        var digest = ContentDigest()
        // The kept prefix is hashed again: the final SHA-256 covers the whole file.
        if target.start > 0, !digest.update(readingFirst: target.start, of: fd) { target.start = 0; digest = ContentDigest() }
        guard ftruncate(fd, off_t(target.start)) == 0 else {
            return failed(.handoffFailed("cannot write \(target.path) in \(directory.path): \(DownloadDirectory.lastError())"))
        }
        let (written, hash, computed): (Int, String, String)
        switch await sink.receive(FileSinkTarget(fd: fd, start: target.start, size: file.size, budget: budget, digest: digest)) {
        case .ended(let bytes, let claimed, let sha256, let left):
            (written, hash, computed, budget) = (bytes, claimed, sha256, left)
        case .tooLong(let bytes):
            return failed(.handoffFailed("\(peer) sent more than the \(file.size ?? 0) bytes it offered for \(target.path)"), bytes: bytes)
        case .overBudget(let bytes):
            return failed(.userInfoTooLarge("standard input from \(peer) passed receive.maxBytes; nothing was kept"), bytes: bytes)
        case .writeFailed(let bytes, let reason):
            // A write failed (the disk is full, say): what was written is of no use.
            return failed(.handoffFailed("cannot write \(target.path) in \(directory.path): \(reason)"), bytes: bytes)
        case .broke(let bytes, let reason):
            // The connection ended mid-file: the partial file stays for a send to resume.
            if !file.isResumable { directory.removePartial(named: target.partialName) }
            let error: HandoffError = if let reason { .handoffFailed("the send from \(peer) broke: \(reason)") }
                else { .handoffFailed("the send from \(peer) ended inside \(target.path)") }
            return FileReceipt(index: target.index, name: "", start: target.start, bytes: bytes, error: error)
        }
        if let size = file.size, target.start + written != size {
            return failed(.handoffFailed("\(target.path) ended after \(target.start + written) of its \(size) bytes; nothing was kept"), bytes: written)
        }
        guard computed == hash else {
            let resumed = target.start > 0 ? " (resumed from \(target.start) bytes kept from an earlier send)" : ""
            return failed(.handoffFailed("\(target.path) arrived with SHA-256 \(computed), not the sender's \(hash)\(resumed); the partial file was discarded: send it again"), bytes: written)
        }
        _ = fchmod(fd, mode_t(file.mode & 0o755 | 0o600))  // the owner may always read and write what arrived
        guard fsync(fd) == 0 else { return failed(.handoffFailed("cannot write \(target.path) in \(directory.path): \(DownloadDirectory.lastError())"), bytes: written) }
        do {
            let name = try directory.place(partial: target.partialName, at: target.path)
            return FileReceipt(index: target.index, name: name, start: target.start, bytes: written)
        } catch {
            return failed(.handoffFailed("\(error)"), bytes: written)
        }
    }
}
