#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The symmetric key a device seals its DNS-SD advertisements with (see ``SealedAdvertisement``).
///
/// A device gives its key to the devices it pairs with; only they can read what it advertises.
/// The key is rotated whenever a device is unpaired (``TrustStore/remove(_:)``), so an unpaired
/// device stops being able to follow it.
public struct AdvertisingKey: Sendable, Hashable {
    /// The key: exactly 32 bytes.
    public let bytes: [UInt8]

    /// A new key from the system's cryptographically secure random number generator.
    public static func random() -> AdvertisingKey {
        var generator = SystemRandomNumberGenerator()
        return AdvertisingKey(unchecked: (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// A key from its 32 bytes.
    ///
    /// - Throws: ``TrustStoreError`` unless `bytes` has exactly 32 bytes.
    public init(bytes: [UInt8]) throws(TrustStoreError) {
        guard bytes.count == 32 else {
            throw TrustStoreError("an advertising key is 32 bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A key from its ``base64`` form.
    ///
    /// - Throws: ``TrustStoreError`` unless `base64` is standard base64 of exactly 32 bytes.
    public init(base64: String) throws(TrustStoreError) {
        guard let data = Data(base64Encoded: base64) else {
            throw TrustStoreError("an advertising key must be base64 (of 32 bytes), got \"\(base64.prefix(60))\"")
        }
        try self.init(bytes: Array(data))
    }

    /// The key in standard base64 (44 characters), as stored in `trust.json`.
    public var base64: String { Data(bytes).base64EncodedString() }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}
