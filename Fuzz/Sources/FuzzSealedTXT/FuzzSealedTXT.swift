// Fuzzes the sealed DNS-SD TXT record (advertisement v3): every host on the LAN can publish any TXT
// rdata under the _handoff._tcp service type, and every agent parses it and tries to open it with
// its paired devices' keys, then checks the sender's signature.
//
// Invariants:
//   - SealedAdvertisement.parse never traps; what it accepts has version v and 100...1300 sealed
//     bytes; opening it with keys that did not seal it fails (a random input never authenticates);
//   - the input, as the plaintext of a sealed record (cut to maximumPlaintextBytes) with a pairing
//     name made from it, gives a record of at most 1300 bytes that parses and opens to the same
//     plaintext and timestamp, under the sealing key only and for its instance name only, with a
//     pairing name that is a prefix of the one given;
//   - flipping any one byte of the sealed bytes makes it impossible to open.

import FuzzSupport
import HandoffTrust
import Glibc

private let target = "FuzzSealedTXT"
private let key = try! AdvertisingKey(bytes: Array(0..<32))
private let otherKey = try! AdvertisingKey(bytes: Array(32..<64))
private let identity: DeviceIdentity = {
    let directory = "/tmp/handoff-fuzz-sealed-txt-\(getpid())"
    return try! DeviceIdentity.loadOrCreate(directory: directory, commonName: "fuzz device")
}()
private let device = identity.deviceID
private let other = DeviceID(certificateDER: Array("other device".utf8))
private let instance = "handoff-0123456789ab"
private let senders = [
    SealedAdvertisement.Sender(deviceID: other, advertisingKey: otherKey, publicKey: nil),
    SealedAdvertisement.Sender(deviceID: device, advertisingKey: key, publicKey: identity.publicKey),
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSealedTXT(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    if let parsed = try? SealedAdvertisement.parse(txtRecord: input) {
        require((100...1300).contains(parsed.sealed.count), target, "parsed \(parsed.sealed.count) sealed bytes from \(hex(input))")
        require(SealedAdvertisement.open(parsed, instanceName: instance, senders: senders) == .unreadable, target,
                "random input authenticated: \(hex(input))")
    }

    let plaintext = Array(input.prefix(SealedAdvertisement.maximumPlaintextBytes))
    let name = input.isEmpty ? nil : String(decoding: input.prefix(300), as: UTF8.self)
    let timestamp = input.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let record = SealedAdvertisement.txtRecord(sealing: plaintext, timestamp: timestamp, instanceName: instance, key: key,
                                               identity: identity, pairingName: name)
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
    guard case .opened(let opened) = SealedAdvertisement.open(parsed, instanceName: instance, senders: senders) else {
        invariantFailed(target, "own record does not open for \(hex(input))")
    }
    require(opened.deviceID == device && opened.plaintext == plaintext && opened.timestamp == timestamp, target,
            "opened to something else for \(hex(input))")
    require(SealedAdvertisement.open(parsed, instanceName: instance, senders: [senders[0]]) == .unreadable, target, "opened with the wrong key")
    require(SealedAdvertisement.open(parsed, instanceName: instance + "x", senders: senders) == .forged(device), target,
            "opened under another instance name")
    if !input.isEmpty {
        var tampered = parsed
        let index = Int(input[0]) % tampered.sealed.count
        tampered.sealed[index] ^= 0x01
        require(SealedAdvertisement.open(tampered, instanceName: instance, senders: senders) == .unreadable, target,
                "tampered byte \(index) still opens")
    }
    return 0
}
