import HandoffCore

/// What a client of a byte-stream request (`copy`, `paste`) learnt: the agent's answer, and for
/// a download the bytes that followed it.
public struct ByteStreamAnswer: Sendable {
    /// The agent's answer (`{"ok": ...}` content).
    public var answer: JSONValue
    /// The bytes that followed the answer (empty for an upload).
    public var bytes: [UInt8]
    /// Their SHA-256, 64 hexadecimal digits.
    public var sha256: String
}

extension ControlClient {
    /// Sends `request`, then the bytes read from `fd` until its end as stream frames
    /// (``ControlByteStream``), and returns the agent's answer. The answer is read while the
    /// bytes are sent: an agent that refuses them (too large, say) answers at once and the
    /// sending stops.
    public func upload(_ request: ControlRequest, readingFrom fd: Int32) async -> Result<JSONValue, HandoffError> {
        let connection: any FrameConnection
        do { connection = try await ControlChannel.openConnection(socketPath: socketPath, hint: Self.hint) } catch { return .failure(error) }
        let result = await withTaskGroup(of: Result<JSONValue, HandoffError>?.self) { group in
            group.addTask {
                do {
                    try await connection.send([Frame(kind: .controlRequest, payload: request.json.serializedBytes)])
                    try await ControlByteStream.send(readingFrom: fd) { try await connection.send($0) }
                    return nil
                } catch let error as HandoffError {
                    return .failure(error)
                } catch {
                    return nil  // the agent stopped reading: its answer says why
                }
            }
            group.addTask {
                do {
                    guard let frame = try await connection.receive() else {
                        return .failure(.handoffFailed("the agent closed the connection without answering; see its log"))
                    }
                    return try ControlProtocol.decodeResponse(frame)
                } catch let error as HandoffError {
                    return .failure(error)
                } catch {
                    return .failure(.handoffFailed("the control connection failed: \(error)"))
                }
            }
            // The first outcome wins: the agent's answer, or a failure to read the bytes to send.
            // Closing the connection then ends the other task.
            var outcome: Result<JSONValue, HandoffError>?
            while let step = await group.next() {
                guard let step, outcome == nil else { continue }
                outcome = step
                await connection.close()
            }
            return outcome ?? .failure(.handoffFailed("the agent sent no answer"))
        }
        await connection.close()
        return result
    }

    /// Sends `request` and reads the agent's answer, then the bytes that follow it as stream
    /// frames, at most `limit(answer)` of them (the size the answer announces). Fails, with the
    /// agent's error, if the bytes do not all arrive.
    public func download(_ request: ControlRequest, limit: @Sendable (JSONValue) -> Int) async -> Result<ByteStreamAnswer, HandoffError> {
        let connection: any FrameConnection
        do { connection = try await ControlChannel.openConnection(socketPath: socketPath, hint: Self.hint) } catch { return .failure(error) }
        let result = await receiveAnswerAndBytes(request, on: connection, limit: limit)
        await connection.close()
        return result
    }

    private func receiveAnswerAndBytes(_ request: ControlRequest, on connection: any FrameConnection, limit: (JSONValue) -> Int) async
        -> Result<ByteStreamAnswer, HandoffError>
    {
        do {
            try await connection.send([Frame(kind: .controlRequest, payload: request.json.serializedBytes)])
            guard let first = try await connection.receive() else {
                return .failure(.handoffFailed("the agent closed the connection without answering; see its log"))
            }
            let answer: JSONValue
            switch try ControlProtocol.decodeResponse(first) {
            case .success(let value): answer = value
            case .failure(let error): return .failure(error)
            }
            let most = limit(answer)
            var stream = ControlByteStream(limit: most, tooLarge: .userInfoTooLarge("the agent sent more than the \(most) bytes it announced"))
            var bytes: [UInt8] = []
            while let frame = try await connection.receive() {
                guard let chunk = try stream.accept(frame) else { break }
                bytes.append(contentsOf: chunk)
            }
            guard stream.isComplete else {
                return .failure(.connectionUnavailable("the agent closed the connection after \(stream.count) bytes; nothing was written"))
            }
            return .success(ByteStreamAnswer(answer: answer, bytes: bytes, sha256: stream.sha256))
        } catch let error as HandoffError {
            return .failure(error)
        } catch {
            return .failure(.handoffFailed("the control connection failed: \(error)"))
        }
    }
}
