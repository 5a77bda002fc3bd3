import Crypto
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A paired device's public key (P-256), with which it signs its advertisements
/// (``SealedAdvertisement``).
///
/// Only ever learnt from the device's certificate, whose SHA-256 is its ``DeviceID``
/// (``init(certificateDER:of:)``): a key is the device's because the certificate it came in is the
/// one the device ID names. Stored in `trust.json` as the base64 of its X9.63 form.
public struct DevicePublicKey: Sendable, Hashable {
    /// The key in X9.63 form (uncompressed point: `04`, x, y): 65 bytes.
    public let x963: [UInt8]

    /// A key from its X9.63 form.
    ///
    /// - Throws: ``TrustStoreError`` unless `x963` is a P-256 public key in X9.63 form.
    public init(x963: [UInt8]) throws(TrustStoreError) {
        guard (try? P256.Signing.PublicKey(x963Representation: x963)) != nil else {
            throw TrustStoreError("a device's public key is a P-256 point in X9.63 form (65 bytes), not these \(x963.count) bytes")
        }
        self.x963 = x963
    }

    /// A key from its ``base64`` form.
    ///
    /// - Throws: ``TrustStoreError`` unless `base64` is standard base64 of a P-256 public key.
    public init(base64: String) throws(TrustStoreError) {
        guard let data = Data(base64Encoded: base64) else {
            throw TrustStoreError("a device's public key must be base64 (of 65 bytes), got \"\(base64.prefix(100))\"")
        }
        try self.init(x963: Array(data))
    }

    /// The public key of device `id`, from its certificate.
    ///
    /// - Throws: ``TrustStoreError`` when `der` is not the certificate of `id` (its SHA-256 is not
    ///   the ID) or holds no P-256 key.
    public init(certificateDER der: [UInt8], of id: DeviceID) throws(TrustStoreError) {
        guard DeviceID(certificateDER: der) == id else {
            throw TrustStoreError("the certificate is not the one of device \(id.shortID): its SHA-256 is another device ID")
        }
        guard let certificate = try? Certificate(derEncoded: der), let key = P256.Signing.PublicKey(certificate.publicKey) else {
            throw TrustStoreError("the certificate of device \(id.shortID) holds no P-256 public key; the device must make a new identity and pair again")
        }
        self.x963 = Array(key.x963Representation)
    }

    /// The key in standard base64, as stored in `trust.json`.
    public var base64: String { Data(x963).base64EncodedString() }

    /// Whether `signature` (raw r‖s, 64 bytes) is this key's ECDSA-SHA256 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard let key = try? P256.Signing.PublicKey(x963Representation: x963),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return key.isValidSignature(signature, for: message)
    }
}
