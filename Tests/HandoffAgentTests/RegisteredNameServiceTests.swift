import Logging
import ServiceLifecycle
import Testing

@testable import HandoffAgent

/// The service that seals the advertisement for the name DNS-SD registered ends with the group,
/// never before it: at a shutdown the advertiser may stop (and its names end) before the group
/// tells this service, and a service that returns first fails the whole group, which then
/// cancels the others (liveness's goodbyes to the paired devices were lost with them).
@Suite("RegisteredNameService: ends with the group")
struct RegisteredNameServiceTests {
    @Test("the names ending before the shutdown (the advertiser stopped first) does not fail the group")
    func namesEndingFirst() async throws {
        let (names, continuation) = AsyncStream.makeStream(of: String.self)
        continuation.finish()
        let service = RegisteredNameService(names: names, agent: makeAgent())
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: Logger(label: "test")))
        try await withThrowingTaskGroup(of: Void.self) { running in
            running.addTask { try await group.run() }
            try await Task.sleep(for: .milliseconds(100))  // the names have ended meanwhile
            await group.triggerGracefulShutdown()
            try await running.next()  // throws ServiceGroupError.serviceFinishedUnexpectedly when the service returns first
        }
    }
}
