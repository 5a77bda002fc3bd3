// Fuzzes the peer protocol's framing and message decoding: what a handoffd reads from any host on
// the LAN before it knows who is talking.
//
// Input layout:
//   byte 0          low 3 bits: k, the number of chunk-size bytes (0: the stream arrives in one piece)
//   bytes 1...k     chunk sizes, each byte b meaning b+1 bytes, used in turn
//   the rest        the TCP byte stream, delivered to FrameParser(limits: FrameLimits()) in chunks
//
// After each chunk, every complete frame is taken and decoded with PeerMessage(frame:) (control
// frames with ControlProtocol.decodeRequest/decodeResponse). Errors are expected; crashes, hangs
// and broken invariants are not:
//   - the parser agrees with a reference reading of the headers: it returns nil only while the
//     header is incomplete or valid with its payload incomplete, and throws exactly when the next
//     header is refused by FrameLimits.check (before its payload is buffered);
//   - bufferedByteCount is what was appended minus the frames returned;
//   - Frame.bytes re-parses to the same frame, leaving nothing buffered;
//   - a decoded PeerMessage re-encodes to a frame that decodes again, and that second encoding is
//     byte-identical (the encoding is canonical after one round);
//   - the JSON that a handler would read for a decoded activity or userInfo can be produced.

import FuzzSupport
import HandoffCore

private let target = "FuzzFrameDecoder"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let first = input.first else { return 0 }
    let sizeCount = Int(first & 0x07)
    guard input.count >= 1 + sizeCount else { return 0 }
    let chunkSizes = input[1..<(1 + sizeCount)].map { Int($0) + 1 }
    let stream = Array(input[(1 + sizeCount)...])

    let limits = FrameLimits()
    var parser = FrameParser(limits: limits)
    var appended = 0
    var consumed = 0
    var chunk = 0
    stream: while appended < stream.count {
        let n = chunkSizes.isEmpty ? stream.count - appended : min(chunkSizes[chunk % chunkSizes.count], stream.count - appended)
        parser.append(stream[appended..<(appended + n)])
        appended += n
        chunk += 1
        while true {
            let buffered = appended - consumed
            require(parser.bufferedByteCount == buffered, target, "bufferedByteCount \(parser.bufferedByteCount), expected \(buffered)")
            // The reference reading of the next header, if it has arrived.
            var header: FrameHeader?
            var headerRefused = false
            if buffered >= Frame.headerSize {
                let h = FrameHeader(bytes: stream[consumed..<(consumed + Frame.headerSize)])
                header = h
                do { try limits.check(h) } catch { headerRefused = true }
            }
            let frame: Frame?
            do {
                frame = try parser.next()
            } catch {
                require(headerRefused, target, "parser threw \(error) at stream offset \(consumed), but the header there is acceptable")
                break stream  // the connection is closed
            }
            require(!headerRefused, target, "parser did not refuse the header at stream offset \(consumed): \(header.map { "\($0)" } ?? "-")")
            guard let frame else {
                if let header {
                    require(buffered - Frame.headerSize < header.length, target,
                            "parser returned nil with a complete \(header.length)-byte payload buffered at offset \(consumed)")
                }
                break
            }
            guard let header else { invariantFailed(target, "parser returned a frame from fewer than \(Frame.headerSize) bytes") }
            require(frame.kind == header.kind && frame.payload.count == header.length, target,
                    "frame \(frame.kind)/\(frame.payload.count) differs from its header \(header.kind)/\(header.length)")
            let expected = stream[(consumed + Frame.headerSize)..<(consumed + Frame.headerSize + header.length)]
            require(frame.payload.elementsEqual(expected), target, "payload differs from the stream at offset \(consumed)")
            consumed += Frame.headerSize + header.length
            check(frame, limits: limits)
        }
    }
    return 0
}

private func check(_ frame: Frame, limits: FrameLimits) {
    // Frame.bytes re-parses to the same frame.
    let bytes = frame.bytes
    var reparser = FrameParser(limits: limits)
    reparser.append(bytes)
    do {
        let again = try reparser.next()
        require(again == frame, target, "Frame.bytes \(hex(bytes)) re-parses to \(again.map { "\($0.kind)/\($0.payload.count)" } ?? "nil")")
        require(reparser.bufferedByteCount == 0, target, "Frame.bytes left \(reparser.bufferedByteCount) bytes buffered")
    } catch {
        invariantFailed(target, "Frame.bytes \(hex(bytes)) is refused on re-parse: \(error)")
    }

    // Control frames (allowed by these limits too) go to the control protocol's decoders: the
    // typed request (and, once read, its wire form reads back as the same request), the
    // response, and the event a response-kind frame may carry.
    if frame.kind == .controlRequest {
        guard let (_, body) = try? ControlProtocol.decodeRequest(frame), let request = try? ControlRequest(json: body) else { return }
        switch request {
        case .publish, .open: return  // an activity without an `id` gets a new one each read; URLs are Foundation's to normalise
        default: break
        }
        require((try? ControlRequest(json: request.json)) == request, target, "\(request.command) request does not read back from its wire form")
        return
    }
    if frame.kind == .controlResponse {
        _ = try? ControlProtocol.decodeResponse(frame)
        if let body = try? JSONValue(parsing: frame.payload) { _ = AppEvent(json: body) }
        return
    }

    let message: PeerMessage
    do { message = try PeerMessage(frame: frame) } catch { return }

    // The message re-encodes; the re-encoding decodes; after one round the encoding is stable.
    let encoded = message.frame
    require(encoded.kind == frame.kind, target, "\(frame.kind) message re-encodes as \(encoded.kind)")
    let again: PeerMessage
    do { again = try PeerMessage(frame: encoded) } catch {
        invariantFailed(target, "re-encoded \(frame.kind) message \(hex(encoded.payload)) does not decode: \(error)")
    }
    let reencoded = again.frame
    require(reencoded.bytes == encoded.bytes, target,
            "\(frame.kind) encoding not stable: \(hex(encoded.payload)) then \(hex(reencoded.payload))")

    // What a handler reads on standard input (ActivityDispatcher) and what `continue` returns.
    switch message {
    case .activity(let activity, _): _ = activity.json.serialized
    case .userInfo(let userInfo): _ = userInfo.userInfoJSON.serialized
    default: break
    }
}
