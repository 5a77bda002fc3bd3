import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-trust-tests-\(UUID().uuidString)").path
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Creates the directory as the agent would: mode 0700.
    func create() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes a file as the agent would: mode 0600.
    func write(_ name: String, _ data: Data) throws {
        try data.write(to: URL(fileURLWithPath: file(name)))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file(name))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    static func permissions(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
