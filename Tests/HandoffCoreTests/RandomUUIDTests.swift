import HandoffCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("UUID.random")
struct RandomUUIDTests {
    @Test("each is a version 4 UUID of the RFC's variant, and none repeats")
    func versionVariantAndUniqueness() {
        var seen = Set<UUID>()
        for _ in 0..<10_000 {
            let id = UUID.random()
            let text = id.uuidString
            #expect(Array(text)[14] == "4", "\(text)")
            #expect("89AB".contains(Array(text)[19]), "\(text)")
            #expect(UUID(uuidString: text) == id)
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }
}
