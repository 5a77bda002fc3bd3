import Foundation
import HandoffConfiguration
import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("DeliveryPlan and DeliveryFailures")
struct DeliveryPlanTests {
    typealias Handler = AgentConfiguration.Handler
    let opener = ["xdg-open"]

    func activity(url: String? = nil, streams: Bool = false) -> Activity {
        var activity = Sample.activity(1)
        activity.webpageURL = url.flatMap(URL.init(string:))
        activity.supportsContinuationStreams = streams
        return activity
    }

    @Test("handlers for the type in config order, then the URL opener")
    func order() {
        let handlers = [Handler(activityTypes: ["*"], command: ["a"]), Handler(activityTypes: ["other.type"], command: ["b"]),
                        Handler(activityTypes: [Sample.notesEdit.rawValue], command: ["c"])]
        let plan = DeliveryPlan(activity(url: "https://example.com/x"), handlers: handlers, urlOpener: opener, urlPolicy: PeerURLPolicy(),
                                canOpenStreams: true)
        #expect(plan.steps == [.handler(command: ["a"], streams: false), .handler(command: ["c"], streams: false),
                               .openURL(command: ["xdg-open", "https://example.com/x"])])
    }

    @Test("a streaming handler gets the streams only when the activity supports them and the agent can open them")
    func streams() {
        let handlers = [Handler(activityTypes: ["*"], command: ["s"], streams: true)]
        let policy = PeerURLPolicy()
        #expect(DeliveryPlan(activity(streams: true), handlers: handlers, urlOpener: opener, urlPolicy: policy, canOpenStreams: true).steps
            == [.handler(command: ["s"], streams: true)])
        #expect(DeliveryPlan(activity(streams: false), handlers: handlers, urlOpener: opener, urlPolicy: policy, canOpenStreams: true).steps
            == [.handler(command: ["s"], streams: false)])
        #expect(DeliveryPlan(activity(streams: true), handlers: handlers, urlOpener: opener, urlPolicy: policy, canOpenStreams: false).steps
            == [.handler(command: ["s"], streams: false)])
    }

    @Test("a URL the policy refuses is a step that says why")
    func refusedURL() throws {
        let plan = DeliveryPlan(activity(url: "file:///etc/passwd"), handlers: [], urlOpener: opener, urlPolicy: PeerURLPolicy(), canOpenStreams: true)
        guard case .refuseURL(let reason) = try #require(plan.steps.first) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(reason.contains("security.urlSchemes"))
        var failures = DeliveryFailures()
        failures.refused(reason)
        #expect(failures.error(for: Sample.notesEdit).message == reason, "alone, the refusal is the error")
    }

    @Test("the error names every step tried, or says that nothing takes the type")
    func failureMessages() {
        #expect(DeliveryFailures().error(for: Sample.notesEdit).message.contains("no handler takes com.example.notes.edit"))
        var failures = DeliveryFailures()
        failures.failed("handler a exited 1")
        failures.refused("the URL is refused")
        let error = failures.error(for: Sample.notesEdit)
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message == "the activity was not handled: handler a exited 1; the URL is refused.")
    }
}

@Suite("FetchedActivityCheck")
struct FetchedActivityCheckTests {
    let offered = ActivityAdvertisement.Current(id: Sample.id(1), activityType: Sample.notesEdit, title: "t", teamID: "TEAM1")

    @Test("what arrives must be what was advertised, unexpired, and accepted by the chosen app")
    func checks() {
        let good = Sample.activity(1)
        let app = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Sample.notesEdit])
        #expect(FetchedActivityCheck.problem(good, sourceTeam: "TEAM1", offered: offered, from: "kitchen", app: app, now: Sample.now) == nil)
        let otherType = Sample.activity(1, type: Sample.mapsView)
        #expect(FetchedActivityCheck.problem(otherType, sourceTeam: "TEAM1", offered: offered, from: "kitchen", app: nil, now: Sample.now)?
            .message.contains("not the com.example.notes.edit it advertised") == true)
        let expired = Sample.activity(1, expiresIn: -1)
        #expect(FetchedActivityCheck.problem(expired, sourceTeam: nil, offered: offered, from: "kitchen", app: nil, now: Sample.now)?
            .message.contains("expired") == true)
        #expect(FetchedActivityCheck.problem(good, sourceTeam: "OTHER", offered: offered, from: "kitchen", app: app, now: Sample.now)?
            .message.contains("type or team") == true)
    }
}
