import XCTest

/// nftables inside a simulated host's network namespace (DoctorOnHostsTests,
/// PushedAdvertisementsOnHostsTests): the machine's own rulesets are never touched.
extension LabTestCase {
    /// Runs `nft` with `commands` inside a host's network namespace.
    func nft(_ host: String, _ commands: String) throws {
        let result = try lab.exec(host, ["nft", commands])
        XCTAssertEqual(result.status, 0, "nft \(commands) on \(host): \(result.stderr)")
    }
}
