import HandoffCore
import Testing

@Suite("Frames: header and limits")
struct FrameTests {
    @Test("a header is the kind then the length as a big-endian UInt32")
    func headerBytes() {
        let header = FrameHeader(kind: .userInfo, length: 0x0102_0304)
        #expect(header.bytes == [0x04, 0x01, 0x02, 0x03, 0x04])
        #expect(FrameHeader(bytes: header.bytes) == header)
    }

    @Test("header bytes round-trip for every kind and boundary length", arguments: [0, 1, 255, 256, 65_535, 65_536, 0xFFFF_FFFF])
    func headerRoundTrip(_ length: Int) {
        for raw in [0x00, 0x01, 0x05, 0x20, 0x21, 0xFF] as [UInt8] {
            let header = FrameHeader(kind: FrameKind(rawValue: raw), length: length)
            #expect(header.bytes.count == Frame.headerSize)
            #expect(FrameHeader(bytes: header.bytes) == header)
        }
    }

    @Test("a header is read from the first five bytes of any collection")
    func headerFromSlice() {
        let bytes: [UInt8] = [0xAA, 0x02, 0x00, 0x00, 0x01, 0x00, 0xBB]
        #expect(FrameHeader(bytes: bytes[1...]) == FrameHeader(kind: .fetch, length: 256))
    }

    @Test("a frame's bytes are its header then its payload")
    func frameBytes() {
        let frame = Frame(kind: .hello, payload: [9, 8, 7])
        #expect(frame.bytes == [0x01, 0, 0, 0, 3, 9, 8, 7])
        #expect(Frame(kind: .error, payload: []).bytes == [0x05, 0, 0, 0, 0])
    }

    @Test("kinds have the protocol's numbers and readable names")
    func kinds() {
        #expect(FrameKind.hello.rawValue == 0x01)
        #expect(FrameKind.fetch.rawValue == 0x02)
        #expect(FrameKind.activity.rawValue == 0x03)
        #expect(FrameKind.userInfo.rawValue == 0x04)
        #expect(FrameKind.error.rawValue == 0x05)
        #expect(FrameKind.controlRequest.rawValue == 0x20)
        #expect(FrameKind.controlResponse.rawValue == 0x21)
        #expect(FrameKind.continued.rawValue == 0x06)
        #expect(FrameKind.streamEnd.rawValue == 0x0A)
        #expect(FrameKind.open.rawValue == 0x0B)
        #expect(FrameKind.opened.rawValue == 0x0C)
        #expect(FrameKind.known == [.hello, .fetch, .activity, .userInfo, .error, .continued, .streamOpen, .streamAccepted,
                                    .streamData, .streamEnd, .open, .opened, .pairRequest, .pairNonce, .pairReveal, .pairConfirm,
                                    .keys, .ping, .pong, .subscribe, .advertisement, .announce, .goodbye, .request, .reply, .searchRequest, .searchResults,
                                    .controlRequest, .controlResponse, .clipboardFetch, .clipboardItem,
                                    .fileOffer, .fileAnswer, .fileEnd, .fileReceived])
        #expect(FrameKind.announce.rawValue == 0x39 && FrameKind.announce.description == "announce")
        #expect(FrameKind.goodbye.rawValue == 0x3A && FrameKind.goodbye.description == "goodbye")
        #expect(FrameKind.request.rawValue == 0x3B && FrameKind.request.description == "request")
        #expect(FrameKind.reply.rawValue == 0x3C && FrameKind.reply.description == "reply")
        #expect(FrameKind.searchRequest.rawValue == 0x50 && FrameKind.searchResults.rawValue == 0x51)
        #expect(FrameKind.searchRequest.description == "searchRequest" && FrameKind.searchResults.description == "searchResults")
        #expect(FrameKind.pairRequest.rawValue == 0x30 && FrameKind.keys.rawValue == 0x34)
        #expect(FrameKind.ping.rawValue == 0x35 && FrameKind.pong.rawValue == 0x36)
        #expect(FrameKind.subscribe.rawValue == 0x37 && FrameKind.advertisement.rawValue == 0x38)
        #expect(FrameKind.subscribe.description == "subscribe" && FrameKind.advertisement.description == "advertisement")
        #expect(FrameKind.ping.description == "ping" && FrameKind.pong.description == "pong")
        #expect(FrameKind.userInfo.description == "userInfo")
        #expect(FrameKind(rawValue: 0x7F).description == "unknown(0x7f)")
    }

    @Test("limits refuse a kind this version does not know", arguments: [0x00, 0x1E, 0x1F, 0x22, 0x80, 0xFF] as [UInt8])
    func unknownKind(_ raw: UInt8) {
        let error = #expect(throws: FrameError.self) { try FrameLimits().check(FrameHeader(kind: FrameKind(rawValue: raw), length: 0)) }
        #expect(error == .unknownKind(raw))
        #expect(error?.description.hasPrefix("unknown frame kind 0x\(String(raw, radix: 16))") == true)
    }

    @Test("defaults are 64 KiB per frame and 3072 bytes of userInfo")
    func defaults() {
        #expect(FrameLimits().maxFrameBytes == 65_536)
        #expect(FrameLimits().maxUserInfoBytes == 3_072)
    }

    @Test("a userInfo header at the limit passes; one byte more is refused as userInfoTooLarge")
    func userInfoLimit() throws {
        let limits = FrameLimits()
        try limits.check(FrameHeader(kind: .userInfo, length: 3_072))
        let error = #expect(throws: FrameError.self) { try limits.check(FrameHeader(kind: .userInfo, length: 3_073)) }
        #expect(error == .userInfoTooLarge(declared: 3_073, limit: 3_072))
        #expect(error?.description == "userInfo of 3073 bytes exceeds limits.maxUserInfoBytes (3072)")
    }

    @Test("other frames are limited by maxFrameBytes", arguments: [FrameKind.hello, .fetch, .activity, .error, .controlRequest, .controlResponse])
    func frameLimit(_ kind: FrameKind) throws {
        let limits = FrameLimits(maxFrameBytes: 100, maxUserInfoBytes: 10)
        try limits.check(FrameHeader(kind: kind, length: 100))
        let error = #expect(throws: FrameError.self) { try limits.check(FrameHeader(kind: kind, length: 101)) }
        #expect(error == .frameTooLarge(kind: kind, declared: 101, limit: 100))
    }

    @Test("the userInfo limit governs userInfo frames alone, whether lower or higher than maxFrameBytes")
    func userInfoLimitIsIndependent() throws {
        try FrameLimits(maxFrameBytes: 10, maxUserInfoBytes: 1_000).check(FrameHeader(kind: .userInfo, length: 1_000))
        #expect(throws: FrameError.userInfoTooLarge(declared: 11, limit: 10)) {
            try FrameLimits(maxFrameBytes: 1_000, maxUserInfoBytes: 10).check(FrameHeader(kind: .userInfo, length: 11))
        }
    }

    @Test("a header declaring 4 GiB - 1 of userInfo is refused with nothing but the header buffered")
    func hugeDeclaredUserInfo() {
        var parser = FrameParser(limits: FrameLimits())
        parser.append(FrameHeader(kind: .userInfo, length: 0xFFFF_FFFF).bytes)
        #expect(parser.bufferedByteCount == 5)
        #expect(throws: FrameError.userInfoTooLarge(declared: 4_294_967_295, limit: 3_072)) { try parser.next() }
        #expect(parser.bufferedByteCount == 5, "no payload was buffered or awaited")
    }

    @Test("an oversized header is refused before its payload arrives, for any frame kind")
    func oversizedBeforePayload() {
        var parser = FrameParser(limits: FrameLimits(maxFrameBytes: 16, maxUserInfoBytes: 8))
        parser.append(FrameHeader(kind: .activity, length: 17).bytes)
        #expect(throws: FrameError.frameTooLarge(kind: .activity, declared: 17, limit: 16)) { try parser.next() }
    }

    @Test("error descriptions say what was refused")
    func errorDescriptions() {
        #expect(FrameError.frameTooLarge(kind: .hello, declared: 70_000, limit: 65_536).description == "hello frame of 70000 bytes exceeds the 65536-byte limit")
        #expect(FrameError.malformed(kind: .fetch, reason: "x").description == "malformed fetch frame: x")
        #expect(FrameError.unexpected(kind: .userInfo, expecting: "hello").description == "unexpected userInfo frame, expecting hello")
    }
}
