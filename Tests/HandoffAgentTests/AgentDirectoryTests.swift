import HandoffConfiguration
import HandoffCore
import HandoffTestSupport
import Testing

@testable import HandoffAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation


/// State and Inbox directories (review finding 16).
@Suite("Agent's directories: no /tmp fallback, no one else's directory", .timeLimit(.minutes(1)))
struct AgentDirectoryTests {
    @Test("without HOME and XDG_STATE_HOME there is no state or Inbox directory, not one in /tmp")
    func noTemporaryFallback() {
        #expect(AgentConfiguration.defaultStateDirectory(environment: [:]) == "")
        #expect(AgentConfiguration.defaultInboxDirectory(environment: ["HOME": ""]) == "")
        #expect(AgentConfiguration.defaultStateDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.local/state/handoff")
        #expect(AgentConfiguration.defaultInboxDirectory(environment: ["HOME": "/home/u", "XDG_STATE_HOME": "/s"]) == "/s/handoff/apps")
    }

    @Test("the agent refuses to start without a state directory, saying what to set")
    func emptyStateDirectory() throws {
        var configuration = AgentConfiguration(name: "x", socketPath: "/tmp/unused.sock")
        configuration.stateDirectory = ""
        #expect(thrownMessage { try AgentSecurity.load(configuration) }?.contains("set HOME or XDG_STATE_HOME") == true)
    }

    @Test("an Inbox whose app directory or Inbox is a symbolic link, or another user's, is refused")
    func inboxComponents() throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let elsewhere = dir.file("elsewhere")
        mkdir(elsewhere, 0o700)
        let root = dir.file("apps")
        // A planted link for the app's directory.
        mkdir(root, 0o700)
        try #require(symlink(elsewhere, root + "/com.example.viewer") == 0)
        #expect(thrownMessage { try OpenURLTransfer.makeInbox(root: root, bundleID: "com.example.viewer") }?.contains("symbolic link") == true)
        // A planted link for the Inbox itself.
        mkdir(root + "/com.example.other", 0o700)
        try #require(symlink(elsewhere, root + "/com.example.other/Inbox") == 0)
        #expect(thrownMessage { try OpenURLTransfer.makeInbox(root: root, bundleID: "com.example.other") }?.contains("symbolic link") == true)
        // Another user's directory.
        mkdir(root + "/com.example.third", 0o700)
        chown(root + "/com.example.third", 65534, 65534)
        #expect(thrownMessage { try OpenURLTransfer.makeInbox(root: root, bundleID: "com.example.third") }?.contains("belongs to uid 65534") == true)
        // A root others may write to.
        let open = dir.file("open")
        mkdir(open, 0o700)
        chmod(open, 0o777)
        #expect(thrownMessage { try OpenURLTransfer.makeInbox(root: open, bundleID: "com.example.viewer") }?.contains("writable by other users") == true)
        // No root at all: refused, not "/<bundleID>/Inbox".
        #expect(thrownMessage { try OpenURLTransfer.makeInbox(root: "", bundleID: "com.example.viewer") }?.contains("is empty") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        // A fresh one is made private.
        let made = try OpenURLTransfer.makeInbox(root: root, bundleID: "com.example.fresh")
        #expect(made == root + "/com.example.fresh/Inbox")
        var info = stat()
        #expect(lstat(made, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test("the control session refuses a process of another uid, and one whose uid is unknown (fails closed)")
    func peerCredentialsFailClosed() {
        #expect(ControlSession.refusal(peerUID: 1000, ownUID: 1000) == nil)
        let other = ControlSession.refusal(peerUID: 65534, ownUID: 1000)
        #expect(other?.message.contains("refuses processes of uid 65534") == true)
        let unknown = ControlSession.refusal(peerUID: nil, ownUID: 1000)
        #expect(unknown?.code.rawValue == 4609)
        #expect(unknown?.message.contains("cannot be learnt") == true)
    }
}
