import Foundation
import HandoffTrust
import HandoffTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif


/// The one check behind the socket, state and Inbox directories (review findings 7 and 16).
@Suite("PrivateDirectory: this user's directories only")
struct PrivateDirectoryTests {
    func made(_ mode: mode_t) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        try #require(mkdir(dir.path, 0o700) == 0)
        chmod(dir.path, mode)
        return dir
    }

    @Test("a directory of the user passes; group or other write, another owner, a symbolic link, a file or nothing do not")
    func problems() throws {
        let good = try made(0o755)
        defer { good.remove() }
        #expect(PrivateDirectory.problem(good.path) == nil)
        #expect(PrivateDirectory.problem(good.path, forbidding: PrivateDirectory.privateMode)?.contains("readable by other users") == true)
        chmod(good.path, 0o700)
        #expect(PrivateDirectory.problem(good.path, forbidding: PrivateDirectory.privateMode) == nil)

        for mode: mode_t in [0o777, 0o770, 0o702, 0o1777] {
            let open = try made(mode)
            defer { open.remove() }
            #expect(PrivateDirectory.problem(open.path)?.contains("writable by other users") == true, "mode \(String(mode, radix: 8))")
        }

        let foreign = try made(0o700)
        defer { foreign.remove() }
        try #require(chown(foreign.path, 65534, 65534) == 0)
        #expect(PrivateDirectory.problem(foreign.path)?.contains("belongs to uid 65534") == true)

        let link = TemporaryDirectory()
        try #require(symlink(good.path, link.path) == 0)
        defer { unlink(link.path) }
        #expect(PrivateDirectory.problem(link.path)?.contains("symbolic link") == true)
        #expect(PrivateDirectory.problem(good.path + "/missing") == "does not exist")
        FileManager.default.createFile(atPath: good.path + "/file", contents: Data())
        #expect(PrivateDirectory.problem(good.path + "/file") == "is not a directory")
    }

    @Test("the error names the directory, the problem and the fix")
    func errorMessage() throws {
        let open = try made(0o777)
        defer { open.remove() }
        #expect(throws: PrivateDirectoryError.self) { try PrivateDirectory.check(open.path, purpose: "the test directory") }
        do { try PrivateDirectory.check(open.path, purpose: "the test directory") } catch {
            #expect(error.description.hasPrefix("the test directory \(open.path) is writable by other users"))
            #expect(error.description.contains("chmod go-w \(open.path)"))
        }
    }

    @Test("an existing state directory of another user, or open to others, or a link, is refused: trust.json is not read from it")
    func stateDirectoryChecked() throws {
        let planted = try made(0o700)
        defer { planted.remove() }
        try TrustStore().save(directory: planted.path)
        try #require(chown(planted.path, 65534, 65534) == 0)
        #expect(thrownMessage { try TrustStore.load(directory: planted.path) }?.contains("belongs to uid 65534") == true)
        #expect(thrownMessage { try DeviceIdentity.loadOrCreate(directory: planted.path, commonName: "x") }?.contains("belongs to uid 65534") == true)

        let open = try made(0o777)
        defer { open.remove() }
        #expect(thrownMessage { try DeviceIdentity.loadOrCreate(directory: open.path, commonName: "x") }?.contains("writable by other users") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: open.path).isEmpty, "no key written there")

        let readable = try made(0o755)
        defer { readable.remove() }
        #expect(thrownMessage { try DeviceIdentity.loadOrCreate(directory: readable.path, commonName: "x") }?.contains("readable by other users") == true)

        let real = try made(0o700)
        defer { real.remove() }
        let link = TemporaryDirectory()
        try #require(symlink(real.path, link.path) == 0)
        defer { unlink(link.path) }
        #expect(thrownMessage { try DeviceIdentity.loadOrCreate(directory: link.path, commonName: "x") }?.contains("symbolic link") == true)
    }

    @Test("an identity key or trust.json readable by others, or of another owner, is refused on load")
    func fileModesOnLoad() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        _ = try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "x")
        try TrustStore().save(directory: dir.path)
        let key = dir.file("identity-key.pem")
        chmod(key, 0o644)
        #expect(thrownMessage { try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "x") }?.contains("chmod 600 \(key)") == true)
        chmod(key, 0o600)
        _ = try DeviceIdentity.loadOrCreate(directory: dir.path, commonName: "x")

        let trust = dir.file("trust.json")
        chmod(trust, 0o622)
        #expect(thrownMessage { try TrustStore.load(directory: dir.path) }?.contains("other users may read or change it") == true)
        chmod(trust, 0o600)
        try #require(chown(trust, 65534, 65534) == 0)
        #expect(thrownMessage { try TrustStore.load(directory: dir.path) }?.contains("belongs to uid 65534") == true)
    }

    @Test("create makes missing directories 0700 and refuses an empty or relative path")
    func create() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try PrivateDirectory.create(dir.path + "/a/b", purpose: "test")
        #expect(try TemporaryDirectory.permissions(dir.path + "/a/b") == 0o700)
        #expect(try TemporaryDirectory.permissions(dir.path + "/a") == 0o700)
        #expect(throws: PrivateDirectoryError.self) { try PrivateDirectory.create("", purpose: "test") }
        #expect(throws: PrivateDirectoryError.self) { try PrivateDirectory.create("relative/dir", purpose: "test") }
    }
}
