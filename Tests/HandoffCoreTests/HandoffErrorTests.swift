import HandoffCore
import Testing

@Suite("HandoffError codes")
struct HandoffErrorTests {
    @Test("codes and names are Apple's NSUserActivity codes", arguments: [
        (HandoffError.Code.userActivityHandoffFailed, 4608, "userActivityHandoffFailed"),
        (HandoffError.Code.userActivityConnectionUnavailable, 4609, "userActivityConnectionUnavailable"),
        (HandoffError.Code.userActivityRemoteApplicationTimedOut, 4610, "userActivityRemoteApplicationTimedOut"),
        (HandoffError.Code.userActivityHandoffUserInfoTooLarge, 4611, "userActivityHandoffUserInfoTooLarge"),
    ])
    func appleCodes(_ code: HandoffError.Code, _ rawValue: Int, _ name: String) {
        #expect(code.rawValue == rawValue)
        #expect(code.name == name)
        #expect(code.description == "\(name) (\(rawValue))")
        #expect(code.isInReservedRange)
        #expect(HandoffError.Code(rawValue: rawValue) == code)
    }

    @Test("the reserved range is NSUserActivityErrorMinimum...NSUserActivityErrorMaximum (4608...4863)")
    func reservedRange() {
        #expect(HandoffError.Code.reservedRange == 4608...4863)
        #expect(HandoffError.Code(rawValue: 4608).isInReservedRange)
        #expect(HandoffError.Code(rawValue: 4863).isInReservedRange)
        #expect(!HandoffError.Code(rawValue: 4607).isInReservedRange)
        #expect(!HandoffError.Code(rawValue: 4864).isInReservedRange)
        #expect(!HandoffError.Code(rawValue: 0).isInReservedRange)
        #expect(!HandoffError.Code(rawValue: -4608).isInReservedRange)
    }

    @Test("codes without a name are named by number")
    func unnamedCodes() {
        #expect(HandoffError.Code(rawValue: 4700).name == "userActivityError4700")
        #expect(HandoffError.Code(rawValue: 4863).name == "userActivityError4863")
        #expect(HandoffError.Code(rawValue: 12).name == "unknown12")
        #expect(HandoffError.Code(rawValue: 4864).description == "unknown4864 (4864)")
    }

    @Test("the helpers carry the matching code and the message")
    func helpers() {
        #expect(HandoffError.handoffFailed("m").code.rawValue == 4608)
        #expect(HandoffError.connectionUnavailable("m").code.rawValue == 4609)
        #expect(HandoffError.remoteTimedOut("m").code.rawValue == 4610)
        #expect(HandoffError.userInfoTooLarge("m").code.rawValue == 4611)
        #expect(HandoffError.userInfoTooLarge("too big").message == "too big")
        #expect(HandoffError.handoffFailed("x").underlying == nil)
    }

    @Test("the description shows number, name and message")
    func description() {
        let error = HandoffError(.userActivityHandoffUserInfoTooLarge, "userInfo of 5000 bytes is too large")
        #expect(error.description == "error 4611 userActivityHandoffUserInfoTooLarge: userInfo of 5000 bytes is too large")
        #expect("\(error)" == error.description)
    }

    @Test("an underlying cause is kept")
    func underlying() {
        let cause = FrameError.unknownKind(0x42)
        let error = HandoffError(.userActivityHandoffFailed, "bad peer", underlying: cause)
        #expect(error.underlying as? FrameError == cause)
    }
}
