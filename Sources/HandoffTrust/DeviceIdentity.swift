import Crypto
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// This agent's key pair and self-signed certificate, and the ``DeviceID`` they give it.
///
/// Stored as `identity-key.pem` (PKCS#8 `PRIVATE KEY`, P-256) and `identity-cert.pem` (X.509 v3)
/// in the agent's state directory, both mode 0600, the directory mode 0700. The PEM strings can be
/// given as they are to swift-nio-ssl (`NIOSSLCertificate(bytes:format: .pem)` and
/// `NIOSSLPrivateKey(bytes:format: .pem)`).
public struct DeviceIdentity: Sendable {
    /// The file name of the private key in the identity directory.
    public static let keyFileName = "identity-key.pem"
    /// The file name of the certificate in the identity directory.
    public static let certificateFileName = "identity-cert.pem"

    /// The SHA-256 of ``certificateDER``.
    public let deviceID: DeviceID
    /// The self-signed certificate, PEM (`CERTIFICATE`).
    public let certificatePEM: String
    /// The private key, PEM (PKCS#8 `PRIVATE KEY`).
    public let privateKeyPEM: String
    /// The self-signed certificate, DER.
    public let certificateDER: [UInt8]
    /// The public key of the certificate: what paired devices check this device's signatures with.
    public let publicKey: DevicePublicKey
    /// The private key, for ``sign(_:)``: parsed once, not at each signature (making a key from its
    /// raw scalar computes its public key, a scalar multiplication as costly as the signature).
    private let signingKey: P256.Signing.PrivateKey

    /// Loads the identity stored in `directory`, or creates and stores a new one.
    ///
    /// Creates `directory` (and its parents) with mode 0700 when missing. When both files exist
    /// they are loaded, and the key must match the certificate's public key. When only the key
    /// exists (creation was interrupted), a new certificate is made for it. Otherwise a new P-256
    /// key and a self-signed certificate (valid from a day ago for 20 years, subject
    /// `CN=commonName`, not a CA, digital signature, server and client authentication, DNS name
    /// `handoff`) are created and written, each to a new file of mode 0600.
    ///
    /// - Throws: ``TrustStoreError`` naming the file and saying what to do when a file cannot be
    ///   read, parsed or written, or the key does not match the certificate.
    public static func loadOrCreate(directory: String, commonName: String) throws(TrustStoreError) -> DeviceIdentity {
        try PrivateFiles.createDirectory(directory)
        let keyPath = PrivateFiles.join(directory, keyFileName)
        let certificatePath = PrivateFiles.join(directory, certificateFileName)
        let keyBytes = try PrivateFiles.contents(keyPath)
        let certificateBytes = try PrivateFiles.contents(certificatePath)
        let deleteBoth = "delete both \(keyPath) and \(certificatePath) to make a new identity (paired devices will need to pair again)"

        switch (keyBytes, certificateBytes) {
        case (let keyBytes?, let certificateBytes?):
            let key = try parseKey(keyBytes, path: keyPath, advice: deleteBoth)
            let certificate: Certificate
            do {
                certificate = try Certificate(pemEncoded: String(decoding: certificateBytes, as: UTF8.self))
            } catch {
                throw TrustStoreError("\(certificatePath) is not a PEM certificate (\(error)): \(deleteBoth)")
            }
            guard let publicKey = P256.Signing.PublicKey(certificate.publicKey),
                publicKey.rawRepresentation == key.publicKey.rawRepresentation
            else {
                throw TrustStoreError("the key in \(keyPath) does not match the certificate in \(certificatePath): \(deleteBoth)")
            }
            return try identity(key: key, certificate: certificate, path: certificatePath)

        case (let keyBytes?, nil):
            let key = try parseKey(keyBytes, path: keyPath, advice: deleteBoth)
            let certificate = try makeCertificate(key: key, commonName: commonName)
            let made = try identity(key: key, certificate: certificate, path: certificatePath)
            try PrivateFiles.writeAtomically(Array(made.certificatePEM.utf8), to: certificatePath)
            return made

        case (nil, .some):
            throw TrustStoreError("\(certificatePath) has no private key next to it (\(keyPath) is missing): delete \(certificatePath) to make a new identity (paired devices will need to pair again)")

        case (nil, nil):
            let key = P256.Signing.PrivateKey()
            let certificate = try makeCertificate(key: key, commonName: commonName)
            let made = try identity(key: key, certificate: certificate, path: certificatePath)
            // The key first: if writing the certificate fails, the next start makes one for it.
            try PrivateFiles.writeAtomically(Array(made.privateKeyPEM.utf8), to: keyPath)
            try PrivateFiles.writeAtomically(Array(made.certificatePEM.utf8), to: certificatePath)
            return made
        }
    }

    /// The device ID of the certificate in `pem`, or nil when `pem` holds no certificate.
    public static func deviceID(ofCertificatePEM pem: String) -> DeviceID? {
        guard let certificate = try? Certificate(pemEncoded: pem),
            let der = try? certificate.serializeAsPEM().derBytes
        else { return nil }
        return DeviceID(certificateDER: der)
    }

    /// The device ID of a certificate in DER (the SHA-256 of `der`): the same as
    /// ``DeviceID/init(certificateDER:)``.
    public static func deviceID(ofCertificateDER der: [UInt8]) -> DeviceID {
        DeviceID(certificateDER: der)
    }

    /// Signs `message` with this device's private key: ECDSA P-256 with SHA-256, the raw 64-byte
    /// form (r‖s). ``DevicePublicKey/isValidSignature(_:for:)`` with ``publicKey`` checks it.
    public func sign(_ message: [UInt8]) -> [UInt8] {
        do {
            return Array(try signingKey.signature(for: message).rawRepresentation)
        } catch {
            // The key was parsed and checked when the identity was loaded: only BoringSSL failing
            // to draw a nonce could make signing fail.
            preconditionFailure("signing with the device key failed: \(error)")
        }
    }

    private init(deviceID: DeviceID, certificatePEM: String, privateKeyPEM: String, certificateDER: [UInt8],
                 key: P256.Signing.PrivateKey) throws(TrustStoreError) {
        self.deviceID = deviceID
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        self.certificateDER = certificateDER
        self.publicKey = try DevicePublicKey(x963: Array(key.publicKey.x963Representation))
        self.signingKey = key
    }

    private static func identity(key: P256.Signing.PrivateKey, certificate: Certificate, path: String) throws(TrustStoreError) -> DeviceIdentity {
        let serialized = Result { try certificate.serializeAsPEM() }
        guard case .success(let document) = serialized else {
            throw TrustStoreError("cannot encode the certificate for \(path): \(serialized)")
        }
        return try DeviceIdentity(
            deviceID: DeviceID(certificateDER: document.derBytes),
            certificatePEM: document.pemString + "\n",
            privateKeyPEM: key.pemRepresentation + "\n",
            certificateDER: document.derBytes,
            key: key
        )
    }

    private static func parseKey(_ bytes: [UInt8], path: String, advice: String) throws(TrustStoreError) -> P256.Signing.PrivateKey {
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw TrustStoreError("\(path) is not a PEM P-256 private key (\(error)): \(advice)")
        }
    }

    private static func makeCertificate(key: P256.Signing.PrivateKey, commonName: String) throws(TrustStoreError) -> Certificate {
        let now = Date()
        do {
            let name = try DistinguishedName { CommonName(commonName) }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth, .clientAuth])
                SubjectAlternativeNames([.dnsName("handoff")])
            }
            return try Certificate(
                version: .v3,
                serialNumber: .init(),
                publicKey: .init(key.publicKey),
                notValidBefore: now - 86_400,
                notValidAfter: now + 20 * 365.25 * 86_400,
                issuer: name,
                subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: extensions,
                issuerPrivateKey: .init(key)
            )
        } catch {
            throw TrustStoreError("cannot make a certificate with common name \"\(commonName)\": \(error)")
        }
    }
}
