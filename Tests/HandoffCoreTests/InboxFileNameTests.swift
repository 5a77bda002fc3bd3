import HandoffCore
import Testing

@Suite("Inbox file names from peers")
struct InboxFileNameTests {
    @Test("no path escapes the Inbox", arguments: [
        ("../../etc/passwd", "passwd"), ("/etc/shadow", "shadow"), ("..\\\\windows\\\\system.ini", "system.ini"),
        ("..", "file"), (".", "file"), ("", "file"), ("a/b/", "b"), ("/", "file"), (".bashrc", "bashrc"),
        ("...hidden", "hidden"), ("notes.txt", "notes.txt"), ("  spaced name.pdf ", "spaced name.pdf"),
        ("line\nbreak\u{0}.txt", "linebreak.txt"), ("c:evil.exe", "cevil.exe"), ("Résumé 📄.pdf", "Résumé 📄.pdf"),
    ])
    func sanitised(_ input: String, _ expected: String) {
        let name = InboxFileName.sanitize(input)
        #expect(name == expected)
        #expect(!name.contains("/") && !name.contains("\\\\") && name != "." && name != "..")
    }

    @Test("long names are cut on a character boundary")
    func long() {
        let name = InboxFileName.sanitize(String(repeating: "é", count: 300))
        #expect(name.utf8.count <= InboxFileName.maximumLength)
        #expect(name.allSatisfy { $0 == "é" })
    }
}
