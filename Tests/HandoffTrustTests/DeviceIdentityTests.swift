import Foundation
import HandoffTrust
import Testing

@Suite("Device identity: key pair and self-signed certificate on disk")
struct DeviceIdentityTests {
    @Test("a new identity is written with private permissions and reloads with the same device ID")
    func createThenReload() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let nested = dir.path + "/state/handoff"
        let created = try DeviceIdentity.loadOrCreate(directory: nested, commonName: "handoff laptop")

        #expect(try TemporaryDirectory.permissions(nested) == 0o700)
        #expect(try TemporaryDirectory.permissions(dir.path + "/state") == 0o700)
        #expect(try TemporaryDirectory.permissions(nested + "/identity-key.pem") == 0o600)
        #expect(try TemporaryDirectory.permissions(nested + "/identity-cert.pem") == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: nested).sorted() == ["identity-cert.pem", "identity-key.pem"])

        #expect(created.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(created.certificatePEM.hasSuffix("-----END CERTIFICATE-----\n"))
        #expect(created.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(created.privateKeyPEM.hasSuffix("-----END PRIVATE KEY-----\n"))
        #expect(created.deviceID == DeviceID(certificateDER: created.certificateDER))
        #expect(DeviceIdentity.deviceID(ofCertificatePEM: created.certificatePEM) == created.deviceID)
        #expect(DeviceIdentity.deviceID(ofCertificateDER: created.certificateDER) == created.deviceID)

        let reloaded = try DeviceIdentity.loadOrCreate(directory: nested, commonName: "another name")
        #expect(reloaded.deviceID == created.deviceID)
        #expect(reloaded.certificateDER == created.certificateDER)
        #expect(reloaded.privateKeyPEM == created.privateKeyPEM)
        #expect(reloaded.certificatePEM == created.certificatePEM)
    }

    @Test("two identities have different device IDs")
    func distinct() throws {
        let a = TemporaryDirectory(), b = TemporaryDirectory()
        defer { a.remove(); b.remove() }
        #expect(try DeviceIdentity.loadOrCreate(directory: a.path, commonName: "a").deviceID != DeviceIdentity.loadOrCreate(directory: b.path, commonName: "a").deviceID)
    }

    @Test("a key that does not match the certificate is refused, naming both files")
    func mismatchedKey() throws {
        let a = TemporaryDirectory(), b = TemporaryDirectory()
        defer { a.remove(); b.remove() }
        _ = try DeviceIdentity.loadOrCreate(directory: a.path, commonName: "a")
        _ = try DeviceIdentity.loadOrCreate(directory: b.path, commonName: "b")
        try FileManager.default.removeItem(atPath: a.file("identity-key.pem"))
        try FileManager.default.copyItem(atPath: b.file("identity-key.pem"), toPath: a.file("identity-key.pem"))

        let error = #expect(throws: TrustStoreError.self) { try DeviceIdentity.loadOrCreate(directory: a.path, commonName: "a") }
        let message = error?.message ?? ""
        #expect(message.contains(a.file("identity-key.pem")))
        #expect(message.contains(a.file("identity-cert.pem")))
        #expect(message.contains("does not match"))
        #expect(message.contains("delete both"))
    }

    @Test("a file that is not PEM is refused with what to do")
    func garbage() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        _ = try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "a")
        try dir.write("identity-cert.pem", Data("hello".utf8))
        let error = #expect(throws: TrustStoreError.self) { try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "a") }
        #expect(error?.message.contains("is not a PEM certificate") == true)
        #expect(error?.message.contains("delete both") == true)
    }

    @Test("a certificate without its key is refused; a key without its certificate gets a new one")
    func halfIdentity() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let first = try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "a")
        try FileManager.default.removeItem(atPath: dir.file("identity-cert.pem"))
        let second = try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "a")
        #expect(second.privateKeyPEM == first.privateKeyPEM)
        #expect(try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "a").deviceID == second.deviceID)

        try FileManager.default.removeItem(atPath: dir.file("identity-key.pem"))
        let error = #expect(throws: TrustStoreError.self) { try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "a") }
        #expect(error?.message.contains("is missing") == true)
    }

    @Test("a directory that cannot be created is reported")
    func uncreatableDirectory() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("plain-file")))
        let error = #expect(throws: TrustStoreError.self) { try DeviceIdentity.loadOrCreate(directory: dir.file("plain-file/sub"), commonName: "a") }
        #expect(error?.message.contains("cannot create the directory") == true)
    }
}
