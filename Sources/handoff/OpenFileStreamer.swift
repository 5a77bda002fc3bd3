import HandoffCore
import HandoffTransport
import NIOCore

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `handoff open FILE`: the file streamed to the app on the peer through the local agent
/// (``ControlRequest/OpenTarget/streamedFile(name:size:)``), the way `handoff send` streams files.
enum OpenFileStreamer {
    /// Sends the file; returns the answer (``OpenResult``'s JSON) or why it failed.
    static func open(_ path: String, peer: String, app: String, annotation: PropertyListValue?, socketPath: String) async -> Result<JSONValue, HandoffError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.handoffFailed("cannot read \(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .failure(.handoffFailed("\(path) is not a file")) }
        let size = Int(info.st_size)
        let request = ControlRequest.open(.init(peer: peer, bundleID: app, target: .streamedFile(name: (path as NSString).lastPathComponent, size: size),
                                                annotation: annotation))
        do {
            let channel = try await StreamChannels.connect(controlSocket: socketPath)
            let allocator = channel.channel.allocator
            return try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(EncodedFrame(Frame(kind: .controlRequest, payload: request.json.serializedBytes), allocator: allocator))
                var frames = inbound.makeAsyncIterator()
                guard let first = try await frames.next()?.frame else { return .failure(.connectionUnavailable("the agent closed the connection")) }
                if case .failure(let error) = try ControlProtocol.decodeResponse(first) { return .failure(error) }
                // A write that fails (the receiver gave up) leaves its answer to be read.
                var writeError: (any Error)?
                do {
                    _ = try await FileSender.writeData(from: fd, bytes: size, hashing: nil, named: path, to: channel.channel, progress: nil)
                    try await outbound.write(EncodedFrame(Frame(kind: .streamEnd, payload: []), allocator: allocator))
                } catch {
                    writeError = error
                }
                guard let answer = try? await frames.next()?.frame else {
                    return .failure(.handoffFailed("sending to \(peer) ended without an answer\(writeError.map { ": \($0)" } ?? "")"))
                }
                switch try PeerMessage(frame: answer) {
                case .opened(let handled): return .success(OpenResult(handled: handled, peer: peer, app: app).json)
                case .error(let code, let message): return .failure(HandoffError(HandoffError.Code(rawValue: code), message))
                default: return .failure(.handoffFailed("\(peer) answered open with a \(answer.kind) frame"))
                }
            }
        } catch {
            return .failure(.connectionUnavailable("cannot reach the handoff agent at \(socketPath): \(error)"))
        }
    }
}
