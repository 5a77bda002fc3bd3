import HandoffCore
import HandoffTrust
import HandoffTransport
import HandoffTrust
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

/// `handoff open`: a URL or a file sent to an app on another host, which gets
/// `open(_:sourceApplication:annotation:)`.
///
/// A file is written to the app's Inbox (`<inboxDirectory>/<bundleID>/Inbox`) under a sanitised,
/// unique name, read-only (0400), and only then handed to the app; a transfer that fails or is
/// larger than `limits.maxOpenFileBytes` leaves nothing behind.
enum OpenURLTransfer {
    // MARK: Sending

    /// Sends a URL, or a file's bytes, to an app on a peer; returns `{"handled": Bool, ...}`.
    static func send(_ request: OpenRequest, file: [UInt8], to peer: PeerRecord, agent: Agent) async -> Result<OpenResult, HandoffError> {
        let limits = agent.configuration.limits
        let connection: any PeerStreamConnection
        do {
            connection = try await agent.transport.connectStream(to: peer.endpoint, limits: ContinuationStreamSession.peerLimits,
                                                                 options: PeerStreamOptions())
        } catch {
            return .failure(.connectionUnavailable("cannot connect to \(peer.name): \(error)"))
        }
        do {
            return try await connection.executeThenClose { inbound, outbound in
                try await outbound.write(PeerMessage.hello(agent.hello).frame)
                try await outbound.write(PeerMessage.open(request).frame)
                // The answer is read while the file is written: a receiver that refuses the file
                // answers at once, and the sender stops writing instead of finding its writes cut.
                return await withTaskGroup(of: SendStep.self) { group in
                    group.addTask {
                        guard request.fileName != nil else { return .written }
                        do {
                            var offset = 0
                            while offset < file.count {
                                let end = min(offset + 60 * 1024, file.count)
                                try await outbound.write(PeerMessage.streamData(Array(file[offset..<end])).frame)
                                offset = end
                            }
                            try await outbound.write(PeerMessage.streamEnd.frame)
                            return .written
                        } catch {
                            return .writeFailed(error)
                        }
                    }
                    group.addTask {
                        .answered(await answer(from: inbound, request: request, peer: peer))
                    }
                    var writeError: (any Error)?
                    var next = await group.next()
                    while let step = next {
                        switch step {
                        case .written:
                            // The receiving app has limits.handlerTimeout to answer; allow the
                            // transfer on top. Then the connection closes, which ends the wait.
                            next = await Deadline.watch(limits.handlerTimeout + limits.fetchTimeout, on: agent.clock,
                                                        onExpiry: { connection.close() }) { await group.next() }.value
                            continue
                        case .writeFailed(let error): writeError = error
                        case .answered(let answer):
                            group.cancelAll()
                            // Without an answer, a write that failed says more than the close.
                            if let writeError, !answer.isAnswer {
                                return .failure(.handoffFailed("sending to \(peer.name) failed: \(writeError)"))
                            }
                            return answer.result
                        }
                        next = await group.next()
                    }
                    return .failure(.handoffFailed("sending to \(peer.name) ended without an answer"))
                }
            }
        } catch {
            return .failure(.handoffFailed("sending to \(peer.name) failed: \(error)"))
        }
    }

    /// What one side of ``send(_:file:to:agent:)`` came to.
    private enum SendStep: Sendable {
        case written
        case writeFailed(any Error)
        case answered(Answer)
    }

    /// The receiver's answer to `open`, or why there was none.
    private struct Answer: Sendable {
        var result: Result<OpenResult, HandoffError>
        /// The receiver answered (`opened` or an error frame), rather than the connection ending.
        var isAnswer: Bool
    }

    /// Reads until the receiver answers, or the connection ends.
    private static func answer(from inbound: PeerFrameInbound, request: OpenRequest, peer: PeerRecord) async -> Answer {
        do {
            for try await frame in inbound {
                switch try PeerMessage(frame: frame) {
                case .hello: continue
                case .opened(let handled):
                    return Answer(result: .success(OpenResult(handled: handled, peer: peer.name, app: request.bundleID)),
                                  isAnswer: true)
                case .error(let code, let message):
                    return Answer(result: .failure(HandoffError(HandoffError.Code(rawValue: code), message)), isAnswer: true)
                default:
                    return Answer(result: .failure(.handoffFailed("\(peer.name) answered open with a \(frame.kind) frame")), isAnswer: true)
                }
            }
            return Answer(result: .failure(.remoteTimedOut("\(peer.name) closed the connection before the app answered")), isAnswer: false)
        } catch {
            return Answer(result: .failure(.handoffFailed("sending to \(peer.name) failed: \(error)")), isAnswer: false)
        }
    }

    // MARK: Receiving

    /// Receives an `open` on a peer connection (the file's frames follow on `inbound`) and answers
    /// with `opened` or `error`.
    static func receive<I: AsyncIteratorProtocol>(_ request: OpenRequest, inbound: inout I, outbound: NIOAsyncChannelOutboundWriter<Frame>,
                                                  peer: String, device: DeviceID?, agent: Agent) async throws where I.Element == Frame {
        var fileRead = false
        let result = await receiveAndDeliver(request, inbound: &inbound, outbound: outbound, fileRead: &fileRead, peer: peer, device: device, agent: agent)
        switch result {
        case .success(let handled): try await outbound.write(PeerMessage.opened(handled: handled).frame)
        case .failure(let error): try await outbound.write(PeerMessage.error(code: error.code.rawValue, message: error.message).frame)
        }
        // A file refused before it was read: its frames are read and dropped (up to its announced
        // size) until the sender, which reads the answer while it writes, stops. Closing at once
        // would cut the sender's writes, and it could lose the answer with them.
        // (A sender that waits for `streamAccepted` sent nothing yet.)
        if request.fileName != nil, !fileRead, !request.answersFirst {
            var dropped = 0
            while dropped <= request.fileSize, let frame = try await inbound.next(), frame.kind == .streamData {
                dropped += frame.payload.count
            }
        }
    }

    private static func receiveAndDeliver<I: AsyncIteratorProtocol>(_ request: OpenRequest, inbound: inout I,
                                                                    outbound: NIOAsyncChannelOutboundWriter<Frame>, fileRead: inout Bool,
                                                                    peer: String, device: DeviceID?, agent: Agent) async
        -> Result<Bool, HandoffError> where I.Element == Frame
    {
        let configuration = agent.configuration
        // A peer never hands an app a file: URL (it would name a file on this host), before any
        // app is started for it.
        if let url = request.url, let problem = PeerURLPolicy.openProblem(url) { return .failure(problem) }
        let reason = LaunchOptions(url: request.url, opensResource: true, sourceApplication: request.sourceApplication, annotation: request.annotation)
        guard await agent.isAppConnected(bundleID: request.bundleID, forDevice: device, launchOptions: reason) else {
            return .failure(.connectionUnavailable("the app \(request.bundleID) is not running on \(configuration.name)"))
        }
        guard let name = request.fileName else {
            return await agent.deliverOpen(url: request.url!, inboxFile: false, request: request, peer: peer)
        }
        guard request.fileSize <= configuration.limits.maxOpenFileBytes else {
            return .failure(.userInfoTooLarge(
                "the file is \(request.fileSize) bytes, over limits.maxOpenFileBytes (\(configuration.limits.maxOpenFileBytes)) on \(configuration.name)"))
        }
        // Each device has a quota of Inbox bytes: what it sent that is still there, and what it
        // is sending now.
        let owner = device?.description ?? peer
        guard agent.inboxQuota.reserve(request.fileSize, for: owner) else {
            return .failure(.userInfoTooLarge(
                "\(peer) already has \(agent.inboxQuota.used(by: owner)) bytes in apps' Inboxes on \(configuration.name); the file's \(request.fileSize) bytes would pass limits.maxInboxBytesPerDevice (\(agent.inboxQuota.limit)). Nothing was written; the receiving app frees room by deleting files it has read"))
        }
        var keptPath: String?
        defer { agent.inboxQuota.finish(request.fileSize, for: owner, kept: keptPath) }
        let inbox: String
        let path: String
        let fd: Int32
        do {
            inbox = try makeInbox(root: configuration.inboxDirectory, bundleID: request.bundleID)
            (path, fd) = try createUnique(in: inbox, name: InboxFileName.sanitize(name))
        } catch {
            return .failure(.handoffFailed("cannot write to the Inbox on \(configuration.name): \(error)"))
        }
        var written = 0
        var complete = false
        if request.answersFirst {
            // The file is taken: now its bytes may come.
            do { try await outbound.write(PeerMessage.streamAccepted.frame) } catch {
                close(fd)
                unlink(path)
                return .failure(.handoffFailed("the file transfer from \(peer) broke: \(error)"))
            }
        }
        fileRead = true
        do {
            while let frame = try await inbound.next() {
                if frame.kind == .streamEnd { complete = true; break }
                guard frame.kind == .streamData else { throw FrameError.unexpected(kind: frame.kind, expecting: "file data") }
                guard written + frame.payload.count <= request.fileSize else { throw FrameError.malformed(kind: .streamData, reason: "more bytes than announced") }
                try writeAll(fd, frame.payload)
                written += frame.payload.count
            }
        } catch {
            close(fd)
            unlink(path)
            return .failure(.handoffFailed("the file transfer from \(peer) broke: \(error)"))
        }
        close(fd)
        guard complete, written == request.fileSize else {
            unlink(path)
            return .failure(.handoffFailed("the file transfer from \(peer) ended after \(written) of \(request.fileSize) bytes; nothing was kept"))
        }
        let outcome = await agent.deliverOpen(url: URL(fileURLWithPath: path), inboxFile: true, request: request, peer: peer)
        // A file the app did not take (declined, failed, no answer) is not kept: only what an
        // app handled stays in its Inbox.
        if case .success(true) = outcome { keptPath = path } else { unlink(path) }
        return outcome
    }

    /// `<root>/<bundleID>/Inbox`, created with mode 0700. The root (config `inboxDirectory`) must
    /// be this user's and not writable by others; `<bundleID>` and `Inbox` must be this user's,
    /// of mode 0700, and not symbolic links (``PrivateDirectory``), so that no one else can make
    /// the agent write elsewhere.
    static func makeInbox(root: String, bundleID: String) throws -> String {
        try PrivateDirectory.create(root, forbidding: PrivateDirectory.noOtherWrite, purpose: "the Inbox directory (config key inboxDirectory)")
        var path = root.hasSuffix("/") ? String(root.dropLast()) : root
        for component in [InboxFileName.sanitize(bundleID), "Inbox"] {
            path += "/" + component
            if mkdir(path, 0o700) == 0 { _ = chmod(path, 0o700) }
            try PrivateDirectory.check(path, forbidding: PrivateDirectory.privateMode, purpose: "the app's Inbox directory")
        }
        return path
    }

    /// Creates `name` in `directory`, or `name (2)`, `name (3)`, ... if taken; never follows or
    /// replaces an existing file (O_EXCL | O_NOFOLLOW). The file is read-only (0400).
    static func createUnique(in directory: String, name: String) throws -> (String, Int32) {
        for attempt in 1...1000 {
            let candidate = UniqueFileName.candidate(name, attempt: attempt)
            let path = "\(directory)/\(candidate)"
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o400)
            if fd >= 0 { return (path, fd) }
            guard errno == EEXIST else { throw InboxError(reason: String(cString: strerror(errno))) }
        }
        throw InboxError(reason: "too many files named \(name)")
    }

    /// Writes every byte to `fd` (``ControlByteStream/writeAll(_:to:)``); a failure is an
    /// ``InboxError``, which the receivers tell apart from a broken transfer.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        do { try ControlByteStream.writeAll(bytes, to: fd) } catch { throw InboxError(reason: error.message) }
    }

    struct InboxError: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }
}
