import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An app the agent may start when something is for it: its manifest and its command.
public struct LaunchableApp: Sendable, Equatable {
    public var manifest: AppManifest
    /// The argv that starts the app; it finds the agent through `HANDOFF_SOCKET`.
    public var launch: [String]

    /// An app with its manifest and the command that starts it.
    public init(manifest: AppManifest, launch: [String]) {
        self.manifest = manifest
        self.launch = launch
    }

    /// Reads `config/apps/*.json`: `{"bundleID", "teamID", "activityTypes": [...], "launch": [argv]}`.
    /// A file that cannot be used is refused, naming the file and the problem.
    public static func load(directory: String) throws(ConfigurationError) -> [LaunchableApp] {
        guard !directory.isEmpty else { return [] }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw ConfigurationError(key: "appsDirectory", "cannot read \(directory): \(fileErrorDescription(error))")
        }
        var apps: [LaunchableApp] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = "\(directory)/\(name)"
            do {
                let json = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
                let manifest = try AppManifest(json: json)
                guard let argv = json["launch"]?.arrayValue?.compactMap(\.stringValue), !argv.isEmpty, !argv[0].isEmpty else {
                    throw AppManifestError("launch must be a non-empty array of strings (the app's argv)")
                }
                apps.append(LaunchableApp(manifest: manifest, launch: argv))
            } catch {
                throw ConfigurationError(key: "appsDirectory", "\(path): \(error)")
            }
        }
        return apps
    }
}
