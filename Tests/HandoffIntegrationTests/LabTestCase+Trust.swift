import Foundation
import XCTest

/// Where a host's agent listens and where its trust list says a device is (TrustOnHostsTests, PairingAttackOnHostsTests,
/// IPv6OnHostsTests).
extension LabTestCase {
    /// The port a host's agent listens for peers on (`handoff status --json`).
    func peerPort(_ host: String) throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(status?["port"] as? Int)
    }

    /// The addresses a host's trust list shows for a device.
    func addresses(on host: String, of deviceID: String) throws -> [String]? {
        let list = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "trust", "list", "--json").stdout.utf8)) as? [[String: Any]]
        return list?.first { $0["deviceID"] as? String == deviceID }?["addresses"] as? [String]
    }
}
