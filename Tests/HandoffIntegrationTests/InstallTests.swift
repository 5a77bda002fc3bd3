import Foundation
import XCTest

/// `scripts/install` and `scripts/uninstall` into a temporary prefix, with the test build's
/// binaries (`--no-build --bin-dir`: CI builds once) and a temporary home, config and state
/// directory; the systemd unit is checked by `systemd-analyze verify` and not started.
final class InstallTests: XCTestCase {
    func testInstallPutsEverythingInPlaceAndUninstallKeepsTheState() throws {
        let lab = try LabDriver(hosts: 1)  // not brought up: only its commands and paths
        let top = NSTemporaryDirectory() + "handoff-install-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: top) }
        let prefix = top + "/prefix", config = top + "/config", state = top + "/state"
        let environment = ["HOME": top + "/home", "XDG_CONFIG_HOME": config, "XDG_STATE_HOME": state]
        let install = [lab.packageRoot.appendingPathComponent("scripts/install").path, "--prefix", prefix, "--no-build",
                       "--bin-dir", lab.binDirectory.path, "--no-start"]
        let uninstall = [lab.packageRoot.appendingPathComponent("scripts/uninstall").path, "--prefix", prefix]

        let installed = try lab.run(install, environment: environment)
        XCTAssertEqual(installed.status, 0, installed.stderr)
        let files = [
            "bin/handoffd", "bin/handoff", "share/man/man1/handoffd.1", "share/man/man1/handoff.1",
            "share/bash-completion/completions/handoff", "share/bash-completion/completions/handoffd",
            "share/zsh/site-functions/_handoff", "share/zsh/site-functions/_handoffd",
            "share/fish/vendor_completions.d/handoff.fish", "share/fish/vendor_completions.d/handoffd.fish",
            "share/systemd/user/handoffd.service", "share/handoff/firewall/firewalld/handoff.xml",
            "share/handoff/firewall/ufw/handoff", "share/doc/handoff/LICENSE",
            "share/handoff/browser/extension/manifest.json", "share/handoff/browser/extension/background.js",
            "share/handoff/browser/handoff-browser-host",
        ].map { prefix + "/" + $0 } + [config + "/autostart/handoffd.desktop",
                                       config + "/chromium/NativeMessagingHosts/org.handoff.browser_host.json",
                                       config + "/google-chrome/NativeMessagingHosts/org.handoff.browser_host.json",
                                       top + "/home/.mozilla/native-messaging-hosts/org.handoff.browser_host.json",
                                       top + "/home/.local/share/applications/handoff-link.desktop",
                                       config + "/handoff/handoffd.json"]  // last: uninstall keeps it
        for file in files { XCTAssertTrue(FileManager.default.fileExists(atPath: file), "\(file) is not installed") }
        let configMode = try FileManager.default.attributesOfItem(atPath: config + "/handoff/handoffd.json")[.posixPermissions] as? Int
        XCTAssertEqual(configMode, 0o600)

        // The native-messaging host: the manifests name the wrapper, which runs the installed handoff.
        let hostManifest = try String(contentsOfFile: config + "/chromium/NativeMessagingHosts/org.handoff.browser_host.json", encoding: .utf8)
        XCTAssertTrue(hostManifest.contains("\"path\": \"\(prefix)/share/handoff/browser/handoff-browser-host\""), hostManifest)
        let wrapper = try String(contentsOfFile: prefix + "/share/handoff/browser/handoff-browser-host", encoding: .utf8)
        XCTAssertTrue(wrapper.contains("exec \"\(prefix)/bin/handoff\" browser-host"), wrapper)

        // Handoff links (x-handoff:): the desktop entry runs `handoff continue %u`, and is the
        // scheme's default handler when xdg-mime is here (xdg-utils, which scripts/install-deps installs).
        let linkEntry = try String(contentsOfFile: top + "/home/.local/share/applications/handoff-link.desktop", encoding: .utf8)
        XCTAssertTrue(linkEntry.contains("MimeType=x-scheme-handler/x-handoff;") && linkEntry.contains("Exec=\(prefix)/bin/handoff continue %u"), linkEntry)
        let xdgMime = ["/usr/bin/xdg-mime", "/usr/local/bin/xdg-mime"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let linkHandler = { try self.output(of: xdgMime.map { [$0, "query", "default", "x-scheme-handler/x-handoff"] }, in: lab, environment) }
        if xdgMime != nil { XCTAssertEqual(try linkHandler(), "handoff-link.desktop") }

        let unit = prefix + "/share/systemd/user/handoffd.service"
        let unitText = try String(contentsOfFile: unit, encoding: .utf8)
        XCTAssertTrue(unitText.contains("Type=notify") && unitText.contains("ExecStart=\(prefix)/bin/handoffd"), unitText)
        // Documentation=man:handoffd(1) is checked too: with the installed pages in MANPATH.
        let verified = try lab.run(["systemd-analyze", "verify", unit], environment: ["MANPATH": prefix + "/share/man:"])
        XCTAssertEqual(verified.status, 0, "systemd-analyze verify: \(verified.stdout)\(verified.stderr)")
        XCTAssertFalse(verified.stderr.contains("handoffd.service"), "systemd-analyze verify complains: \(verified.stderr)")

        let version = try lab.run([prefix + "/bin/handoffd", "--version"])
        XCTAssertTrue(version.stdout.hasPrefix("handoffd 0."), version.stdout)
        XCTAssertTrue(try lab.run([prefix + "/bin/handoff", "--version"]).stdout.hasPrefix("handoff 0."))

        // handoffd without --config reads $XDG_CONFIG_HOME/handoff/handoffd.json; --check-config
        // exits 78 and names the key when it is wrong.
        let checked = try lab.run([prefix + "/bin/handoffd", "--check-config"], environment: environment)
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertTrue(checked.stdout.contains(config + "/handoff/handoffd.json"), checked.stdout)
        try Data(#"{"port": 70000}"#.utf8).write(to: URL(fileURLWithPath: config + "/handoff/handoffd.json"))
        let refused = try lab.run([prefix + "/bin/handoffd", "--check-config"], environment: environment)
        XCTAssertEqual(refused.status, 78)
        XCTAssertTrue(refused.stderr.contains("port"), refused.stderr)

        // A second install keeps the user's config; uninstall keeps config and state.
        try Data(#"{"name": "mine"}"#.utf8).write(to: URL(fileURLWithPath: config + "/handoff/handoffd.json"))
        XCTAssertEqual(try lab.run(install, environment: environment).status, 0)
        XCTAssertEqual(try String(contentsOfFile: config + "/handoff/handoffd.json", encoding: .utf8), #"{"name": "mine"}"#)
        try FileManager.default.createDirectory(atPath: state + "/handoff", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: state + "/handoff/trust.json", contents: Data("{}".utf8))
        let removed = try lab.run(uninstall, environment: environment)
        XCTAssertEqual(removed.status, 0, removed.stderr)
        for file in files.dropLast() { XCTAssertFalse(FileManager.default.fileExists(atPath: file), "\(file) is left after uninstall") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: prefix + "/share/handoff"))
        if xdgMime != nil { XCTAssertEqual(try linkHandler(), "", "uninstall leaves the link handler registered") }
        XCTAssertTrue(FileManager.default.fileExists(atPath: config + "/handoff/handoffd.json"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: state + "/handoff/trust.json"))

        // --purge removes them too.
        XCTAssertEqual(try lab.run(install, environment: environment).status, 0)
        XCTAssertEqual(try lab.run(uninstall + ["--purge"], environment: environment).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: config + "/handoff"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: state + "/handoff"))
    }

    /// A command's trimmed standard output (empty without a command).
    private func output(of command: [String]?, in lab: LabDriver, _ environment: [String: String]) throws -> String {
        guard let command else { return "" }
        return try lab.run(command, environment: environment).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
