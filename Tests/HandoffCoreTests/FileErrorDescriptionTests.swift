import Foundation
import HandoffCore
import Testing

@Suite("File error description: Foundation's text without Foundation")
struct FileErrorDescriptionTests {
    @Test("every CocoaError code reads as Foundation's localizedDescription does", arguments: [4, 255, 256, 257, 258, 259, 260, 261, 262, 263, 264, 512, 513, 514, 516, 517, 518, 640, 642])
    func sameAsFoundation(code: Int) {
        let error = CocoaError(CocoaError.Code(rawValue: code), userInfo: ["NSFilePath": "/x/y"])
        #expect(fileErrorDescription(error) == error.localizedDescription)
    }

    @Test("reading a missing file and listing a file say what Foundation says")
    func realErrors() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/config.json"
        let readError = #expect(throws: (any Error).self) { try Data(contentsOf: URL(fileURLWithPath: missing)) }
        let listError = #expect(throws: (any Error).self) { try FileManager.default.contentsOfDirectory(atPath: "/etc/hostname") }
        for error in [readError, listError].compactMap({ $0 }) {
            #expect(fileErrorDescription(error) == error.localizedDescription)
        }
        #expect(fileErrorDescription(try #require(readError)) == "The operation could not be completed. The file doesn’t exist.")
    }
}
