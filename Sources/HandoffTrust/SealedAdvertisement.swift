import Crypto
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A DNS-SD TXT record whose content only paired devices can read, and only its sender can have
/// written.
///
/// The advertised content (for example an `ActivityAdvertisement`'s record) is first signed with
/// the sender's device key (ECDSA P-256, SHA-256; see ``DeviceIdentity/sign(_:)``) over
///
/// ```
/// "handoff-ad-v3" ‖ len(instance) (2 bytes, big-endian) ‖ instance name (UTF-8) ‖ timestamp (8 bytes, big-endian) ‖ content
/// ```
///
/// so that the record cannot be moved to another DNS-SD instance name nor its timestamp changed.
/// Then `timestamp ‖ signature (64 bytes, r‖s) ‖ content` is sealed with ChaCha20-Poly1305 under
/// the sender's ``AdvertisingKey`` (a random 12-byte nonce, associated data `handoff-ad-v3`). The
/// signature is inside the sealed box: an observer who knows a device's public key (any host that
/// connects to its agent sees its certificate) cannot check records against it. The sealed box
/// (nonce, ciphertext, tag) is base64 encoded and split over TXT strings:
///
/// ```
/// v=3  s0=<base64…>  s1=<base64…>  …  [pair=<name>]
/// ```
///
/// `pair` is present only while the device is waiting to be paired, so that the person can pick
/// it in a list. A receiver opens a record with the advertising keys of its paired devices and
/// accepts it only when the signature verifies with the public key of the device whose key opened
/// it (``open(_:instanceName:senders:)``): a paired device that holds another's advertising key
/// can read, but not forge, its records. An observer without the key reads nothing of the
/// content; what the rest of the DNS-SD service tells (host name, address) is in SECURITY.md.
public enum SealedAdvertisement {
    /// The value of `v` in a sealed record.
    public static let protocolVersion = 3

    /// The largest record ``txtRecord(sealing:timestamp:instanceName:key:identity:pairingName:)`` produces, in bytes:
    /// the same bound as `ActivityAdvertisement.maximumRecordSize`.
    public static let maximumRecordSize = 1300

    /// The largest plaintext ``txtRecord(sealing:timestamp:instanceName:key:identity:pairingName:)``
    /// accepts: 656 bytes.
    ///
    /// With it the sealed box is 756 bytes (nonce, tag, timestamp, signature and content), 1008
    /// base64 characters, which fill exactly four TXT strings (`s0`…`s3`, 256 bytes each); with
    /// `v=3` (4 bytes) and the longest `pair` string (256 bytes) the record is 1284 bytes, within
    /// ``maximumRecordSize``.
    public static let maximumPlaintextBytes = 656

    /// The associated data of every sealed box.
    static let associatedData: [UInt8] = Array("handoff-ad-v3".utf8)
    /// The bytes a signature starts with, so it cannot be taken for a signature of anything else.
    static let signatureContext: [UInt8] = Array("handoff-ad-v3".utf8)
    /// An ECDSA P-256 signature in raw form (r‖s).
    static let signatureBytes = 64
    /// Nonce (12) + tag (16) + timestamp (8) + signature (64): the smallest sealed box.
    static let minimumSealedBytes = 12 + 16 + 8 + 64
    /// The most `sN` strings a record may have.
    static let maximumSealedStrings = 16

    /// The TXT rdata advertising `plaintext`, signed by `identity` and sealed under `key`.
    ///
    /// - Parameters:
    ///   - plaintext: what paired devices will read; at most ``maximumPlaintextBytes`` bytes.
    ///   - timestamp: signed and sealed with the plaintext (for example milliseconds since 1970),
    ///     so a receiver can ignore a replayed record; never the same for two different records.
    ///   - instanceName: the DNS-SD instance name the record is published under; signed, so the
    ///     record is refused under any other name.
    ///   - key: this device's own advertising key.
    ///   - identity: this device's identity, whose key signs the record.
    ///   - pairingName: the name to show to devices looking for one to pair with, only while
    ///     pairing; truncated on a character boundary to fit one TXT string.
    /// - Precondition: `plaintext.count <= maximumPlaintextBytes`; the caller keeps its content
    ///   under the limit (for example by shortening a title).
    public static func txtRecord(sealing plaintext: [UInt8], timestamp: UInt64, instanceName: String, key: AdvertisingKey,
                                 identity: DeviceIdentity, pairingName: String? = nil) -> [UInt8] {
        precondition(
            plaintext.count <= maximumPlaintextBytes,
            "a sealed advertisement holds at most \(maximumPlaintextBytes) bytes, not \(plaintext.count): shorten what is advertised"
        )
        let signature = identity.sign(signedBytes(instanceName: instanceName, timestamp: timestamp, plaintext: plaintext))
        var message: [UInt8] = []
        message.reserveCapacity(8 + signatureBytes + plaintext.count)
        message.append(contentsOf: bigEndian(timestamp))
        message.append(contentsOf: signature)
        message.append(contentsOf: plaintext)

        let sealed: [UInt8]
        do {
            let box = try ChaChaPoly.seal(message, using: SymmetricKey(data: key.bytes), nonce: ChaChaPoly.Nonce(), authenticating: associatedData)
            sealed = Array(box.combined)
        } catch {
            // Only a malformed key or nonce makes sealing fail; both are made right above.
            preconditionFailure("ChaChaPoly.seal failed: \(error)")
        }

        var strings: [[UInt8]] = [Array("v=\(protocolVersion)".utf8)]
        var text = Base64.encode(sealed)[...]
        var index = 0
        while !text.isEmpty {
            let prefix = Array("s\(index)=".utf8)
            let take = min(text.count, 255 - prefix.count)
            strings.append(prefix + text.prefix(take))
            text = text.dropFirst(take)
            index += 1
        }
        if let pairingName {
            let prefix = "pair="
            strings.append(Array((prefix + TXTRecordEncoding.truncate(pairingName, toUTF8Bytes: 255 - prefix.utf8.count)).utf8))
        }
        return TXTRecordEncoding.rdata(strings)
    }

    /// What anyone can read from a sealed record: the version, the sealed bytes, and the pairing
    /// name when the device is waiting to be paired.
    public struct Public: Sendable, Hashable {
        /// The protocol version (`v`): always ``SealedAdvertisement/protocolVersion`` once parsed.
        public var version: Int
        /// The sealed box: nonce, ciphertext and tag.
        public var sealed: [UInt8]
        /// The name the device shows to devices looking for one to pair with, while pairing.
        public var pairingName: String?

        /// Creates the public part of a record.
        public init(version: Int, sealed: [UInt8], pairingName: String?) {
            self.version = version
            self.sealed = sealed
            self.pairingName = pairingName
        }
    }

    /// A record opened with a paired device's key.
    public struct Opened: Sendable, Hashable {
        /// The paired device whose key opened the record.
        public var deviceID: DeviceID
        /// The timestamp sealed with the content.
        public var timestamp: UInt64
        /// The content.
        public var plaintext: [UInt8]

        /// Creates an opened record.
        public init(deviceID: DeviceID, timestamp: UInt64, plaintext: [UInt8]) {
            self.deviceID = deviceID
            self.timestamp = timestamp
            self.plaintext = plaintext
        }
    }

    /// Reads the public part of TXT rdata, strictly; never traps, whatever the bytes.
    ///
    /// Keys are case-insensitive and a key's first occurrence wins (RFC 6763); strings without
    /// `=`, with an empty key, or with unknown keys are ignored. `v` must be the integer
    /// ``protocolVersion``; the `sN` strings must run from `s0` without gaps, with N below 16;
    /// their concatenation must be standard base64 of 100...1300 bytes; `pair` must be UTF-8.
    ///
    /// - Throws: ``SealedAdvertisementError`` saying what is wrong.
    public static func parse(txtRecord: [UInt8]) throws(SealedAdvertisementError) -> Public {
        var version: [UInt8]?
        var pairing: [UInt8]?
        var parts = [[UInt8]?](repeating: nil, count: maximumSealedStrings)
        var i = 0
        while i < txtRecord.count {
            let length = Int(txtRecord[i])
            i += 1
            guard length <= txtRecord.count - i else { throw .malformed("a TXT string runs past the end of the record") }
            let string = txtRecord[i..<(i + length)]
            i += length
            guard let eq = string.firstIndex(of: UInt8(ascii: "=")), eq > string.startIndex else { continue }
            let key = string[string.startIndex..<eq].map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
            let value = Array(string[(eq + 1)...])
            if key == Array("v".utf8) {
                if version == nil { version = value }
            } else if key == Array("pair".utf8) {
                if pairing == nil { pairing = value }
            } else if key.count >= 2, key[0] == UInt8(ascii: "s"), key.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 }) {
                let digits = key.dropFirst()
                guard digits.count <= 2, let n = Int(String(decoding: digits, as: UTF8.self)), n < maximumSealedStrings else {
                    throw .malformed("s\(String(decoding: digits.prefix(12), as: UTF8.self)) is beyond s\(maximumSealedStrings - 1)")
                }
                guard digits.count == 1 || digits.first != UInt8(ascii: "0") else {
                    throw .malformed("s\(String(decoding: digits, as: UTF8.self)) has a leading zero")
                }
                if parts[n] == nil { parts[n] = value }
            }
        }

        guard let version else { throw .notSealed }
        guard !version.isEmpty, version.count <= 9, version.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let number = Int(String(decoding: version, as: UTF8.self))
        else {
            throw .malformed("v is \"\(String(decoding: version.prefix(20), as: UTF8.self))\", not a version number")
        }
        guard number == protocolVersion else { throw .unsupportedVersion(number) }

        var text: [UInt8] = []
        let count = parts.prefix { $0 != nil }.count
        guard count > 0 else { throw .malformed("the sealed content (s0) is missing") }
        if let gap = parts[count...].firstIndex(where: { $0 != nil }) {
            throw .malformed("s\(gap) is present but s\(count) is missing")
        }
        for part in parts.prefix(count) { text.append(contentsOf: part ?? []) }
        guard let sealed = Base64.decode(text) else { throw .malformed("the sealed content (s0…s\(count - 1)) is not base64") }
        guard sealed.count >= minimumSealedBytes else {
            throw .malformed("the sealed content is \(sealed.count) bytes; it is at least \(minimumSealedBytes)")
        }
        guard sealed.count <= maximumRecordSize else {
            throw .malformed("the sealed content is \(sealed.count) bytes; it is at most \(maximumRecordSize)")
        }

        var pairingName: String?
        if let pairing {
            guard let name = String(validating: pairing, as: UTF8.self) else { throw .malformed("pair is not UTF-8") }
            pairingName = name
        }
        return Public(version: number, sealed: sealed, pairingName: pairingName)
    }

    /// A device whose records this agent reads: its advertising key and, once learnt, its public key.
    public struct Sender: Sendable, Hashable {
        /// Who the device is.
        public var deviceID: DeviceID
        /// The key it seals its records with.
        public var advertisingKey: AdvertisingKey
        /// The key its signatures verify with; nil until learnt from its certificate.
        public var publicKey: DevicePublicKey?

        /// Creates a sender.
        public init(deviceID: DeviceID, advertisingKey: AdvertisingKey, publicKey: DevicePublicKey?) {
            self.deviceID = deviceID
            self.advertisingKey = advertisingKey
            self.publicKey = publicKey
        }
    }

    /// What opening a record found.
    public enum Opening: Sendable, Hashable {
        /// Sealed with a sender's key and signed by that sender for this instance name.
        case opened(Opened)
        /// Sealed with the key of this device, but not signed by it for this instance name: forged
        /// by another holder of its advertising key, or moved from another instance.
        case forged(DeviceID)
        /// Sealed with the key of this device, whose public key is not known yet: nothing it says
        /// can be believed until the key is learnt.
        case unverified(DeviceID)
        /// No sender's key opens it (an unpaired device, a key not learnt yet, or tampering).
        case unreadable
    }

    /// Opens a record published under `instanceName` with each sender's advertising key, and
    /// checks the signature with the public key of the sender whose key opened it.
    ///
    /// Every sender is tried (two devices could hold the same advertising key): a record is
    /// ``Opening/opened(_:)`` only when it is signed by the very device it is attributed to.
    ///
    /// `provenBy` names a device that is already known to have sent this very record under this
    /// name, so that checking its signature again would prove nothing new: the device at the other
    /// end of a TLS connection pinned to its certificate, which pushed the record over it (only
    /// that device holds the certificate's private key), or the device whose signature verified on
    /// these same sealed bytes under this name before. Its key must still open the record (and its
    /// public key be known, as for any sender); any other sender's records are verified as always,
    /// so a device can never be attributed a record sealed with another's key.
    public static func open(_ advertisement: Public, instanceName: String, senders: [Sender], provenBy: DeviceID? = nil) -> Opening {
        guard advertisement.version == protocolVersion,
            advertisement.sealed.count >= minimumSealedBytes,
            let box = try? ChaChaPoly.SealedBox(combined: advertisement.sealed)
        else { return .unreadable }
        var forged: DeviceID?
        var unverified: DeviceID?
        for sender in senders {
            guard let message = try? ChaChaPoly.open(box, using: SymmetricKey(data: sender.advertisingKey.bytes), authenticating: associatedData),
                message.count >= 8 + signatureBytes
            else { continue }
            let bytes = Array(message)
            let timestamp = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let signature = Array(bytes[8..<(8 + signatureBytes)])
            let plaintext = Array(bytes[(8 + signatureBytes)...])
            guard let publicKey = sender.publicKey else {
                unverified = unverified ?? sender.deviceID
                continue
            }
            guard sender.deviceID == provenBy
                || publicKey.isValidSignature(signature, for: signedBytes(instanceName: instanceName, timestamp: timestamp, plaintext: plaintext))
            else {
                forged = forged ?? sender.deviceID
                continue
            }
            return .opened(Opened(deviceID: sender.deviceID, timestamp: timestamp, plaintext: plaintext))
        }
        if let forged { return .forged(forged) }
        if let unverified { return .unverified(unverified) }
        return .unreadable
    }

    /// What the sender signs: the context, the instance name, the timestamp and the content.
    static func signedBytes(instanceName: String, timestamp: UInt64, plaintext: [UInt8]) -> [UInt8] {
        let name = Array(instanceName.utf8.prefix(0xFFFF))
        var bytes = signatureContext
        bytes.reserveCapacity(bytes.count + 2 + name.count + 8 + plaintext.count)
        bytes.append(UInt8(name.count >> 8))
        bytes.append(UInt8(name.count & 0xFF))
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: bigEndian(timestamp))
        bytes.append(contentsOf: plaintext)
        return bytes
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
    }
}

/// A TXT record that is not a sealed handoff advertisement this agent can read.
public enum SealedAdvertisementError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The record has no `v`: it is not a handoff agent's.
    case notSealed
    /// The record is of a protocol version this agent does not speak.
    case unsupportedVersion(Int)
    /// The record is broken in the way described.
    case malformed(String)

    public var description: String {
        switch self {
        case .notSealed:
            "not a handoff advertisement: it has no protocol version (v)"
        case .unsupportedVersion(let v):
            "the advertisement is protocol version \(v); this agent speaks version \(SealedAdvertisement.protocolVersion): update handoff on the older device"
        case .malformed(let why):
            "malformed sealed advertisement: \(why)"
        }
    }
}

/// Standard base64 (RFC 4648 section 4) with padding, strict: no line breaks or other characters,
/// padding only at the end, unused bits zero.
enum Base64 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i])
            let b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[n >> 18 & 63])
            out.append(alphabet[n >> 12 & 63])
            out.append(i + 1 < bytes.count ? alphabet[n >> 6 & 63] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[n & 63] : UInt8(ascii: "="))
            i += 3
        }
        return out
    }

    static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var i = 0
        while i < text.count {
            let last = i + 4 == text.count
            // A group's four values in one integer, six bits each (no array per group).
            var n = 0
            var padding = 0
            for j in 0..<4 {
                let c = text[i + j]
                n <<= 6
                if c == UInt8(ascii: "=") {
                    guard last, j >= 2 else { return nil }
                    padding += 1
                    continue
                }
                guard padding == 0, let v = value(c) else { return nil }
                n |= v
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(n >> 8 & 0xFF)) } else if n & 0xFFFF != 0 { return nil }
            if padding < 1 { out.append(UInt8(n & 0xFF)) } else if n & 0xFF != 0 { return nil }
            i += 4
        }
        return out
    }

    private static func value(_ c: UInt8) -> Int? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(c) - 65
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(c) - 97 + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(c) - 48 + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
