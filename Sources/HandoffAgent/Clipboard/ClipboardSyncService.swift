import HandoffCore
import HandoffTrust
import Logging
import ServiceLifecycle

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

/// `clipboard.sync`: watches the desktop clipboard (``DesktopClipboard``) and offers each new
/// item to the paired devices, as `handoff copy` would. It polls every `interval`: the
/// clipboard's types (one short command), and its contents only to compare them with the last
/// seen (by SHA-256), so an item this agent put there itself (a paired device's) is never offered
/// back. What is on the clipboard when the agent starts is not offered: only a new copy is. The
/// first look is taken at once, and logged ("clipboard.sync: watching the desktop clipboard"):
/// from then on, every copy is offered.
/// The other direction, a paired device's item put on the desktop clipboard, is the agent's
/// (`putOnDesktopClipboard`), when the item is first seen.
public struct ClipboardSyncService: Service, CustomStringConvertible {
    let agent: Agent
    let interval: Duration
    let environment: [String: String]

    public init(agent: Agent, interval: Duration = .milliseconds(500), environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.agent = agent
        self.interval = interval
        self.environment = environment
    }

    /// What ServiceLifecycle logs: never the environment, which may hold secrets.
    public var description: String { "ClipboardSyncService(interval: \(interval))" }

    public func run() async throws {
        var lastSeen: String?
        var warned = false
        var started = false
        var looked = false
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            // The first look at once: what is copied after it is offered; what was there before is not.
            if looked {
                do { try await Task.sleep(for: interval) } catch { return }
            }
            looked = true
            guard agent.configuration.clipboard.sync else { continue }
            let clipboard: DesktopClipboard
            switch DesktopClipboard.detect(environment: environment) {
            case .success(let found): clipboard = found
            case .failure(let unavailable):
                if !warned { agent.logger.warning("clipboard.sync: \(unavailable.reason)") }
                warned = true
                continue
            }
            var current: (bytes: [UInt8], mimeType: String, digest: String)?
            if let (type, mimeType) = await types(clipboard).flatMap(DesktopClipboard.pick), let bytes = await read(clipboard, type) {
                current = (bytes, mimeType, ContentDigest.hex(of: bytes))
            }
            // The first look only learns what is there already.
            let firstLook = !started
            started = true
            if firstLook {
                agent.logger.info("clipboard.sync: watching the desktop clipboard", metadata: [
                    "handoff.clipboard": "\(clipboard.kind == .x11 ? "X11 (xclip)" : "Wayland (wl-clipboard)")", "handoff.interval": "\(interval)"])
            }
            guard let (bytes, mimeType, digest) = current, digest != lastSeen else { continue }
            lastSeen = digest
            guard !firstLook, await agent.clipboardLastPut != digest else { continue }
            await agent.offerDesktopClipboard(bytes, mimeType: mimeType)
        }
    }

    /// The clipboard's types; nil when it has no owner (or the tool is missing).
    private func types(_ clipboard: DesktopClipboard) async -> [String]? {
        guard let output = await agent.clipboardCommandOutput(clipboard.typesCommand, limit: 64 * 1024) else { return nil }
        return String(decoding: output, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// The clipboard's contents as `type`, up to `clipboard.maxBytes`.
    private func read(_ clipboard: DesktopClipboard, _ type: String) async -> [UInt8]? {
        await agent.clipboardCommandOutput(clipboard.readCommand(type), limit: agent.configuration.clipboard.maxBytes)
    }
}
