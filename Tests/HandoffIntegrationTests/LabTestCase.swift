import Foundation
import XCTest

/// A test class whose tests share one lab of simulated hosts: up before the class's first test,
/// down after its last. A subclass says how many hosts (``hostCount``) and prepares them
/// (``prepare(_:)``: agents, pairing); if building or preparing the lab fails, every test of the
/// class fails with that error.
class LabTestCase: XCTestCase {
    private struct Setup {
        var lab: LabDriver
        var error: (any Error)?
    }

    /// Each subclass's lab, by class (XCTest sets a class up, runs its tests, tears it down).
    nonisolated(unsafe) private static var setups: [ObjectIdentifier: Setup] = [:]
    nonisolated(unsafe) private static var creationErrors: [ObjectIdentifier: any Error] = [:]

    /// How many hosts the lab has.
    class var hostCount: Int { 2 }

    /// Whether the lab is IPv6-only (``LabDriver/ipv6Only``).
    class var ipv6Only: Bool { false }
    /// How the hosts are connected: one link unless a subclass says otherwise.
    class var topology: LabTopology { .oneLink }

    /// Starts the agents and whatever else the tests need, once the hosts are up.
    class func prepare(_ lab: LabDriver) throws {}

    /// The class's lab. Available from ``prepare(_:)`` on.
    class var lab: LabDriver { setups[ObjectIdentifier(self)]!.lab }
    var lab: LabDriver { Self.lab }

    /// Whether the lab is up and prepared (for tear-down code that must not touch a broken one).
    class var labIsReady: Bool { setups[ObjectIdentifier(self)].map { $0.error == nil } ?? false }

    override class func setUp() {
        super.setUp()
        let id = ObjectIdentifier(self)
        do {
            let lab = try LabDriver(hosts: hostCount, topology: topology, ipv6Only: ipv6Only)
            setups[id] = Setup(lab: lab)
            do {
                try lab.up()
                try prepare(lab)
            } catch {
                setups[id]?.error = error
            }
        } catch {
            creationErrors[id] = error
        }
    }

    override class func tearDown() {
        let id = ObjectIdentifier(self)
        setups.removeValue(forKey: id)?.lab.down()
        creationErrors.removeValue(forKey: id)
        super.tearDown()
    }

    /// PIDs of the programs this test started in the background with ``startLogged(_:_:log:)``.
    var started: [Int32] = []

    /// Starts a program on a host in the background, its output in a log (returned); it is stopped
    /// (SIGTERM) when the test ends, whatever happened.
    func startLogged(_ host: String, _ argv: [String], log name: String) throws -> String {
        let (log, pid) = try lab.startLogged(host, argv, log: name)
        started.append(pid)
        return log
    }

    override func tearDownWithError() throws {
        for pid in started { kill(pid, SIGTERM) }
        started = []
        failForAgentCrashes()
        try super.tearDownWithError()
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        let id = ObjectIdentifier(Self.self)
        if let error = Self.creationErrors[id] ?? Self.setups[id]?.error { throw error }
    }
}
