import ArgumentParser
import HandoffCore

import Foundation

/// `handoff doctor`: why nothing shows up. Asks the agent what it sees (`diagnose`), looks at this
/// host (``HostProbe``) and prints each check's verdict (``DoctorVerdicts``).
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the agent, avahi-daemon, interfaces, firewalls and paired devices; say what to fix.",
        discussion: """
            Each check prints ok, warn or fail, what it saw and what to do. With --json, an array of \
            {check, status, detail, fix}. Exit status: 0 when no check fails, 1 otherwise. Firewall \
            rules can be read only as root.
            """)
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let agent = await options.client.call(.diagnose).map(AgentDiagnosis.init(json:))
        let avahiFallback: Bool? = if case .failure = agent { HostProbe.avahiDaemonRunning() } else { nil }
        let findings = DoctorVerdicts.findings(agent: agent, avahiRunningWithoutAgent: avahiFallback, host: HostProbe.observe())
        if options.json {
            print(JSONValue.array(findings.map(\.json)).prettySerialized)
        } else {
            for finding in findings {
                say("\(finding.status.rawValue.padding(toLength: 4, withPad: " ", startingAt: 0)) \(finding.check): \(finding.detail)")
                if !finding.fix.isEmpty, finding.status != .ok { say("     fix: \(finding.fix)") }
            }
        }
        let status = DoctorVerdicts.exitStatus(findings)
        if status != 0 { throw ExitCode(status) }
    }
}
