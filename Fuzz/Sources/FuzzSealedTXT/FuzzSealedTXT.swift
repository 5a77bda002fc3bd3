// Fuzzes the sealed DNS-SD TXT record (protocol v2): every host on the LAN can publish any TXT
// rdata under the _handoff._tcp service type, and every agent parses it and tries to open it with
// its paired devices' keys.
//
// Invariants:
//   - SealedAdvertisement.parse never traps; what it accepts has version v and 36...1300 sealed
//     bytes; opening it with keys that did not seal it fails (a random input never authenticates);
//   - the input, as the plaintext of a sealed record (cut to maximumPlaintextBytes) with a pairing
//     name made from it, gives a record of at most 1300 bytes that parses and opens to the same
//     plaintext and timestamp, under the sealing key only, with a pairing name that is a prefix of
//     the one given;
//   - flipping any one byte of the sealed bytes makes it impossible to open.

import FuzzSupport
import HandoffTrust

private let target = "FuzzSealedTXT"
private let key = try! AdvertisingKey(bytes: Array(0..<32))
private let otherKey = try! AdvertisingKey(bytes: Array(32..<64))
private let device = DeviceID(certificateDER: Array("fuzz device".utf8))
private let other = DeviceID(certificateDER: Array("other device".utf8))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSealedTXT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    if let parsed = try? SealedAdvertisement.parse(txtRecord: input) {
        require((36...1300).contains(parsed.sealed.count), target, "parsed \(parsed.sealed.count) sealed bytes from \(hex(input))")
        require(SealedAdvertisement.open(parsed, keys: [(device, key), (other, otherKey)]) == nil, target,
                "random input authenticated: \(hex(input))")
    }

    let plaintext = Array(input.prefix(SealedAdvertisement.maximumPlaintextBytes))
    let name = input.isEmpty ? nil : String(decoding: input.prefix(300), as: UTF8.self)
    let timestamp = input.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let record = SealedAdvertisement.txtRecord(sealing: plaintext, timestamp: timestamp, key: key, pairingName: name)
    require(record.count <= SealedAdvertisement.maximumRecordSize, target, "record of \(record.count) bytes for \(hex(input))")
    let parsed: SealedAdvertisement.Public
    do { parsed = try SealedAdvertisement.parse(txtRecord: record) } catch {
        invariantFailed(target, "own record refused (\(error)) for \(hex(input))")
    }
    require(parsed.version == SealedAdvertisement.protocolVersion, target, "version \(parsed.version)")
    if let name {
        let shown = parsed.pairingName ?? ""
        require(name.utf8.starts(with: shown.utf8), target, "pairing name \(shown) is not a prefix of \(name)")
    } else {
        require(parsed.pairingName == nil, target, "a pairing name appeared")
    }
    guard let opened = SealedAdvertisement.open(parsed, keys: [(other, otherKey), (device, key)]) else {
        invariantFailed(target, "own record does not open for \(hex(input))")
    }
    require(opened.deviceID == device && opened.plaintext == plaintext && opened.timestamp == timestamp, target,
            "opened to something else for \(hex(input))")
    require(SealedAdvertisement.open(parsed, keys: [(other, otherKey)]) == nil, target, "opened with the wrong key")
    if !input.isEmpty {
        var tampered = parsed
        let index = Int(input[0]) % tampered.sealed.count
        tampered.sealed[index] ^= 0x01
        require(SealedAdvertisement.open(tampered, keys: [(device, key)]) == nil, target, "tampered byte \(index) still opens")
    }
    return 0
}
