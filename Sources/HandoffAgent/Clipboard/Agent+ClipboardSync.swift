import HandoffCore
import HandoffTransport
import HandoffTrust

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

extension Agent {
    // MARK: clipboard.sync: the desktop clipboard

    /// Offers what was copied on the desktop as this device's clipboard item.
    func offerDesktopClipboard(_ bytes: [UInt8], mimeType: String) {
        let id = UUID.random()
        do {
            let fd = try clipboardSpool.create(id)
            defer { close(fd) }
            try ControlByteStream.writeAll(bytes, to: fd)
        } catch {
            clipboardSpool.remove(id)
            logger.warning("clipboard.sync: cannot offer the desktop clipboard: \(error.message)")
            return
        }
        _ = offerClipboard(id: id, item: ClipboardItemInfo(mimeType: mimeType, size: bytes.count, sha256: ContentDigest.hex(of: bytes)))
    }

    /// With `clipboard.sync`, a paired device's new item goes on the desktop clipboard: fetched
    /// at once up to `clipboard.syncMaxBytes`; a larger one only with `handoff paste` (X11's
    /// clipboard, served by xclip, cannot fetch when a program asks).
    func syncIn(_ sightings: [ClipboardSightings.Sighting]) {
        guard configuration.clipboard.sync, let newest = sightings.last,
            case .success(let clipboard) = DesktopClipboard.detect(environment: ProcessInfo.processInfo.environment),
            let peer = directory.all.first(where: { $0.advertisement.clipboard == newest.itemID })
        else { return }
        let limit = configuration.clipboard.syncMaxBytes
        background.spawn { [self] in
            var bytes: [UInt8] = []
            var mimeType = ""
            do {
                try await ClipboardTransfer.fetch(newest.itemID, from: peer, agent: self, limit: .max) { item in
                    guard item.size <= limit else {
                        self.logger.info("clipboard.sync: \(peer.name)'s item is \(item.size) bytes, over clipboard.syncMaxBytes (\(limit)); `handoff paste` fetches it")
                        return false
                    }
                    mimeType = item.mimeType
                    return true
                } onBytes: { bytes += $0 }
            } catch {
                self.logger.warning("clipboard.sync: cannot fetch \(peer.name)'s clipboard item: \((error as? HandoffError)?.message ?? "\(error)")")
                return
            }
            guard !mimeType.isEmpty else { return }
            await self.putOnDesktopClipboard(bytes, mimeType: mimeType, clipboard: clipboard, from: peer.name)
        }
    }

    /// Puts bytes on the desktop clipboard; they are remembered, so that the watcher does not
    /// offer them back.
    func putOnDesktopClipboard(_ bytes: [UInt8], mimeType: String, clipboard: DesktopClipboard, from peer: String) async {
        clipboardLastPut = ContentDigest.hex(of: bytes)
        let outcome = await CommandRunner(clock: self.clock).run(clipboard.writeCommand(clipboard.putType(mimeType)), input: bytes, environment: [:], timeout: .seconds(5))
        if outcome.succeeded {
            logger.info("clipboard.sync: put \(peer)'s item on the desktop clipboard", metadata: ["handoff.size": "\(bytes.count)", "handoff.type": "\(mimeType)"])
        } else {
            logger.warning("clipboard.sync: \(clipboard.writeCommand(mimeType)[0]) \(outcome.description)")
        }
    }

    /// What a command prints on standard output, up to `limit` bytes; nil when it fails, prints
    /// more, or cannot start. The output goes through an unlinked file in the spool directory.
    func clipboardCommandOutput(_ argv: [String], limit: Int) async -> [UInt8]? {
        guard let fd = try? clipboardSpool.scratch() else { return nil }
        defer { close(fd) }
        let outcome = await ChildProcess.run(argv, environment: ChildEnvironment.current(), stdout: .descriptor(fd), timeout: .seconds(5), clock: self.clock)
        guard outcome.succeeded else { return nil }
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0, size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Int(size), 0) }
        return n == Int(size) ? bytes : nil
    }
}
