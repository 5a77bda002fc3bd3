import Foundation
import XCTest

@testable import HandoffDiscovery

/// The DNS code of wide-area DNS-SD: names, messages, RFC 2136 updates and TSIG (RFC 8945).
final class WideAreaDNSTests: XCTestCase {
    /// An update `nsupdate -y hmac-sha256:handoff-key:c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTMyYg==`
    /// sent (BIND 9.18, captured on a lab host): zone handoff.test., delete the SRV RRset of
    /// inst._handoff._tcp, add its PTR, SRV (port 52123, h1.handoff.test.), TXT "v=1" "s=abc",
    /// and h1.handoff.test. A 198.18.1.1; signed at 1795656530 (names compressed, as BIND writes).
    static let nsupdateCapture = bytes("""
        d98a280000010000000500010768616e646f66660474657374000006000104696e7374085f68616e646f6666045f74637007\
        68616e646f6666047465737400002100ff000000000000c023000c0001000000780002c01ec01e002100010000007800170000\
        0000cb9b0268310768616e646f6666047465737400c01e0010000100000078000a03763d3105733d616263c0690001000100\
        0000780004c61201010b68616e646f66662d6b65790000fa00ff00000000003d0b686d61632d7368613235360000006b078b\
        52012c0020b97fc2a05057d88a2b7c6ab0702df6e54378e1ff568695fd806c6da54a39be9ed98a00000000
        """)
    /// Where the TSIG record starts in the capture.
    static let tsigOffset = 0xA0
    static let key = TSIGKey(name: DNSName("handoff-key.")!, secret: Array(Data(base64Encoded: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTMyYg==")!))

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    func testNamesEncodeAndRefuseBadLabels() {
        XCTAssertEqual(DNSName("h1.handoff.test.")!.wire, [2, 0x68, 0x31] + [7] + Array("handoff".utf8) + [4] + Array("test".utf8) + [0])
        XCTAssertEqual(DNSName("h1.handoff.test"), DNSName("h1.handoff.test."))
        XCTAssertEqual(DNSName(".")!.wire, [0])
        XCTAssertNil(DNSName("a..b"))
        XCTAssertNil(DNSName(String(repeating: "x", count: 64) + ".test"))
        XCTAssertNotNil(DNSName(String(repeating: "x", count: 63) + ".test"))
        XCTAssertEqual(DNSName("Handoff-Key.")!.canonicalWire, DNSName("handoff-key.")!.wire)
        XCTAssertTrue(DNSName("H1.Handoff.Test")!.matches(DNSName("h1.handoff.test")!))
    }

    func testTheCapturedUpdateDecodesWithCompressedNamesFollowed() throws {
        let message = try DNSMessage(wire: Self.nsupdateCapture)
        XCTAssertEqual(message.opcode, DNSMessage.opcodeUpdate)
        XCTAssertEqual(message.questions, [.init(name: DNSName("handoff.test.")!, type: DNSRecord.typeSOA)])
        XCTAssertEqual(message.authority.count, 5)
        XCTAssertEqual(message.authority[0], DNSRecord(name: DNSName("inst._handoff._tcp.handoff.test.")!, type: DNSRecord.typeSRV,
                                                       recordClass: DNSRecord.classANY, ttl: 0, rdata: []))
        XCTAssertEqual(message.authority[1].rdata, DNSName("inst._handoff._tcp.handoff.test.")!.wire, "the PTR's target, decompressed")
        XCTAssertEqual(message.authority[2].rdata, DNSRecord.srvData(port: 52123, target: DNSName("h1.handoff.test.")!))
        XCTAssertEqual(message.authority[3].rdata, [3] + Array("v=1".utf8) + [5] + Array("s=abc".utf8))
        XCTAssertEqual(message.authority[4].rdata, DNSRecord.aData("198.18.1.1"))
        let tsig = try XCTUnwrap(message.additional.last)
        XCTAssertEqual(tsig.type, DNSRecord.typeTSIG)
        XCTAssertEqual(tsig.name, DNSName("handoff-key.")!)
        let signature = try TSIGKey.Signature(rdata: tsig.rdata)
        XCTAssertEqual(signature.algorithm, TSIGKey.algorithm)
        XCTAssertEqual(signature.timeSigned, 1_795_656_530)
        XCTAssertEqual(signature.fudge, 300)
        XCTAssertEqual(signature.originalID, message.id)
        XCTAssertEqual(signature.mac.count, 32)
    }

    /// The MAC over the capture's message (ARCOUNT before the TSIG record) and TSIG variables is
    /// the one nsupdate sent: the same computation BIND verifies.
    func testTSIGMACMatchesNsupdates() throws {
        var unsigned = Array(Self.nsupdateCapture[..<Self.tsigOffset])
        unsigned[11] = 0  // ARCOUNT 1 -> 0
        let signature = try TSIGKey.Signature(rdata: try XCTUnwrap(try DNSMessage(wire: Self.nsupdateCapture).additional.last).rdata)
        XCTAssertEqual(Self.key.mac(of: unsigned, timeSigned: signature.timeSigned, fudge: signature.fudge), signature.mac)
        XCTAssertNotEqual(TSIGKey(name: Self.key.name, secret: Array("wrong".utf8)).mac(of: unsigned, timeSigned: signature.timeSigned), signature.mac)
    }

    func testASignedRegistrationRoundTripsAndItsMACVerifies() throws {
        let records = try XCTUnwrap(DNSSDRecords(domain: DNSName("handoff.test.")!, serviceType: "_handoff._tcp", instance: "handoff-0123",
                                                 port: 52123, txt: [3] + Array("v=1".utf8), address: [198, 18, 1, 1]))
        let update = DNSMessage.update(id: 0x1234, zone: records.domain, updates: records.registration)
        let signed = Self.key.sign(update, timeSigned: 1_801_944_914)
        let decoded = try DNSMessage(wire: signed)
        XCTAssertEqual(decoded.authority, update.authority)
        XCTAssertEqual(decoded.authority.map(\.name.description), [
            "handoff-0123._handoff._tcp.handoff.test.", "handoff-0123._handoff._tcp.handoff.test.", "handoff-0123.handoff.test.",
            "_handoff._tcp.handoff.test.", "handoff-0123._handoff._tcp.handoff.test.", "handoff-0123._handoff._tcp.handoff.test.",
            "handoff-0123.handoff.test.",
        ])
        let signature = try TSIGKey.Signature(rdata: try XCTUnwrap(decoded.additional.first).rdata)
        XCTAssertEqual(signature.originalID, 0x1234)
        XCTAssertEqual(Self.key.mac(of: update.wire, timeSigned: 1_801_944_914), signature.mac)
        // Removal: the PTR to this instance only (class NONE), and everything at its two names.
        XCTAssertEqual(records.removal.map(\.recordClass), [DNSRecord.classNONE, DNSRecord.classANY, DNSRecord.classANY])
        XCTAssertEqual(records.removal.map(\.type), [DNSRecord.typePTR, DNSRecord.typeANY, DNSRecord.typeANY])
    }

    func testMalformedMessagesAreRefused() {
        XCTAssertThrowsError(try DNSMessage(wire: Array(Self.nsupdateCapture.prefix(40))))
        // A compression pointer to itself (a loop) is refused.
        var looping: [UInt8] = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        looping += [0xC0, 12, 0, 1, 0, 1]
        XCTAssertThrowsError(try DNSMessage(wire: looping)) { XCTAssertEqual($0 as? DNSWireError, .badName) }
    }

    func testTSIGErrorsAreExplained() {
        var tsig = TSIGKey.Signature(timeSigned: 0, mac: [], originalID: 1)
        tsig.error = TSIGKey.errorBadSignature
        let response = DNSMessage(id: 1, flags: 0x8000 | 5 << 11 | 9, additional: [
            DNSRecord(name: DNSName("k.")!, type: DNSRecord.typeTSIG, recordClass: DNSRecord.classANY, ttl: 0, rdata: tsig.rdata),
        ])
        XCTAssertEqual(WideAreaRegistrar.explain(response), "NOTAUTH (TSIG BADSIG: the key's secret does not match the server's; check tsigSecret)")
    }
}
