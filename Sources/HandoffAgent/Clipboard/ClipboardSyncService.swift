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

    /// What the watch has learnt so far.
    private struct Watch {
        /// The SHA-256 of the clipboard's contents at the last look.
        var lastSeen: String?
        /// Whether the missing desktop clipboard was reported.
        var warned = false
        /// Whether the first look, which only learns what is there already, was taken.
        var started = false
    }

    public func run() async throws {
        var watch = Watch()
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            // The first look at once: what is copied after it is offered; what was there before is not.
            await look(&watch)
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }

    /// One look at the desktop clipboard: offers its contents when they are new since the last.
    private func look(_ watch: inout Watch) async {
        guard agent.configuration.clipboard.sync else { return }
        let clipboard: DesktopClipboard
        switch DesktopClipboard.detect(environment: environment) {
        case .success(let found): clipboard = found
        case .failure(let unavailable):
            if !watch.warned { agent.logger.warning("clipboard.sync: \(unavailable.reason)") }
            watch.warned = true
            return
        }
        var current: (bytes: [UInt8], mimeType: String, digest: String)?
        if let (type, mimeType) = await types(clipboard).flatMap(DesktopClipboard.pick), let bytes = await read(clipboard, type) {
            current = (bytes, mimeType, ContentDigest.hex(of: bytes))
        }
        let firstLook = !watch.started
        if firstLook {
            watch.started = true
            agent.logger.info("clipboard.sync: watching the desktop clipboard", metadata: [
                "handoff.clipboard": "\(clipboard.kind == .x11 ? "X11 (xclip)" : "Wayland (wl-clipboard)")", "handoff.interval": "\(interval)"])
        }
        guard let (bytes, mimeType, digest) = current, digest != watch.lastSeen else { return }
        watch.lastSeen = digest
        guard !firstLook, await agent.clipboardLastPut != digest else { return }
        await agent.offerDesktopClipboard(bytes, mimeType: mimeType)
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
