import Foundation
import HandoffCore
import Testing

@Suite("File send: names, the offer's answer, resume keys and the wire forms")
struct FileSendTests {
    let hash = String(repeating: "ab", count: 32)
    let policy = FileOfferDecision.Policy(enabled: true, maxBytes: 1 << 30)

    func file(_ path: String, _ size: Int? = 100, resumeKey: String? = nil) -> OfferedFile {
        OfferedFile(path: path, size: size, mode: 0o644, resumeKey: size == nil ? nil : (resumeKey ?? hash))
    }

    @Test("a sent path never leaves the download directory", arguments: [
        ("../x", "x"), ("/etc/x", "etc/x"), ("a/../../up.bin", "a/up.bin"), ("a//b/./c.txt", "a/b/c.txt"),
        ("tree/sub/file.bin", "tree/sub/file.bin"), (".handoff-partial/x", "handoff-partial/x"), ("dir/.hidden", "dir/hidden"),
    ])
    func sanitised(_ input: String, _ expected: String) throws {
        let path = try #require(ReceivedPath(sanitizing: input))
        #expect(path.description == expected)
        #expect(!path.components.contains("..") && !path.components.contains("") && !path.description.hasPrefix("/"))
    }

    @Test("a path that cannot name a file is refused", arguments: ["", "/", "..", "./..", "a\u{0}b", String(repeating: "d/", count: 40) + "f"])
    func refusedPaths(_ input: String) {
        #expect(ReceivedPath(sanitizing: input) == nil)
    }

    @Test func anOfferIsTakenFromTheStartWithoutPartialFiles() throws {
        let offer = FileOffer(files: [file("a.txt"), file("b/c.bin", 200)])
        let decision = try FileOfferDecision.decide(offer, from: "h1", receiver: "h2", policy: policy, partialLengths: [nil, nil], freeBytes: 1000).get()
        #expect(decision.starts == [0, 0])
        #expect(decision.paths.map(\.description) == ["a.txt", "b/c.bin"])
    }

    @Test func aPartialCopyIsResumedAndOnlyWhatRemainsMustFit() throws {
        let offer = FileOffer(files: [file("big.bin", 1000), file("stdin", nil)])
        // 600 of 1000 bytes arrived before: 400 remain, and 500 are free.
        let decision = try FileOfferDecision.decide(offer, from: "h1", receiver: "h2", policy: policy, partialLengths: [600, 50], freeBytes: 500).get()
        #expect(decision.starts == [600, 0], "standard input never resumes")
        // A partial longer than the file is not used.
        let longer = try FileOfferDecision.decide(offer, from: "h1", receiver: "h2", policy: policy, partialLengths: [2000, nil], freeBytes: nil).get()
        #expect(longer.starts == [0, 0])
    }

    @Test func refusalsSayWhy() {
        let offer = FileOffer(files: [file("a.bin", 2000)])
        func refusal(_ policy: FileOfferDecision.Policy, free: Int? = nil, offer: FileOffer? = nil) -> HandoffError? {
            guard case .failure(let error) = FileOfferDecision.decide(offer ?? FileOffer(files: [file("a.bin", 2000)]), from: "h1", receiver: "h2",
                                                                      policy: policy, partialLengths: [nil], freeBytes: free) else { return nil }
            return error
        }
        let off = refusal(.init(enabled: false, maxBytes: 1 << 30))
        #expect(off?.code == .userActivityConnectionUnavailable && off?.message.contains("receive.enabled") == true)
        let large = refusal(.init(enabled: true, maxBytes: 1000))
        #expect(large?.code == .userActivityHandoffUserInfoTooLarge && large?.message.contains("receive.maxBytes") == true)
        let full = refusal(policy, free: 1999)
        #expect(full?.code == .userActivityHandoffFailed && full?.message.contains("1.0 KiB free") == false && full?.message.contains("free") == true)
        let bad = refusal(policy, offer: FileOffer(files: [file("x\u{0}y")]))
        #expect(bad?.message.contains("cannot name a file") == true)
        _ = offer
    }

    @Test func partialKeysTellFilesApart() {
        let a = PartialFileKey.text(device: "D1", file: file("a.bin"))
        #expect(a != nil)
        #expect(a != PartialFileKey.text(device: "D2", file: file("a.bin")))
        #expect(a != PartialFileKey.text(device: "D1", file: file("b.bin")))
        #expect(a != PartialFileKey.text(device: "D1", file: file("a.bin", 101)))
        #expect(a != PartialFileKey.text(device: "D1", file: file("a.bin", resumeKey: String(repeating: "cd", count: 32))))
        #expect(PartialFileKey.text(device: "D1", file: file("stdin", nil)) == nil)
    }

    @Test func anOfferNamesNoHashOnlyAResumeKey() throws {
        // An older sender's up-front "sha256" is not read: the hash comes in each file's fileEnd.
        let old: UserInfo = ["files": .array([.dictionary(["path": .string("a.bin"), "size": .integer(5), "sha256": .string(hash)])])]
        let file = try #require(try FileOffer(propertyList: old).files.first)
        #expect(file.resumeKey == nil && !file.isResumable)
        #expect(FileOffer(files: [self.file("a.bin")]).propertyList == .dictionary(["files": .array([
            .dictionary(["path": .string("a.bin"), "size": .integer(100), "mode": .integer(0o644), "resumeKey": .string(hash)]),
        ])]))
        let bad: JSONValue = .array([.object(["path": .string("a.bin"), "size": .integer(5), "resumeKey": .string("ABC")])])
        #expect(throws: HandoffError.self) { try FileOffer(json: bad) }
    }

    @Test func uniqueNamesKeepTheExtension() {
        #expect(UniqueFileName.candidate("report.pdf", attempt: 1) == "report.pdf")
        #expect(UniqueFileName.candidate("report.pdf", attempt: 2) == "report (2).pdf")
        #expect(UniqueFileName.candidate("README", attempt: 3) == "README (3)")
        #expect(UniqueFileName.candidate(".profile", attempt: 2) == ".profile (2)")
    }

    @Test func messagesRoundTripThroughFrames() throws {
        let messages: [FileTransferMessage] = [
            .offer(FileOffer(files: [file("a/b.txt", 5), file("stdin", nil)])),
            .answer(starts: [0, 4096]),
            .fileEnd(sha256: hash),
            .received(FileReceipt(index: 1, name: "a/b (2).txt", start: 4096, bytes: 10)),
            .received(FileReceipt(index: 0, name: "", start: 0, bytes: 3, error: .handoffFailed("no"))),
        ]
        for message in messages {
            #expect(try PeerMessage(frame: message.frame) == .files(message))
        }
        #expect(throws: FrameError.self) { try PeerMessage(frame: Frame(kind: .fileEnd, payload: FileTransferMessage.fileEnd(sha256: "XYZ").frame.payload)) }
    }

    @Test func sendFilesRequestRoundTrips() throws {
        let request = ControlRequest.sendFiles(peer: "h2", offer: FileOffer(files: [file("a.txt"), file("stdin", nil)]))
        #expect(try ControlRequest(json: request.json) == request)
        #expect(request.startsStreamSession)
        #expect(throws: HandoffError.self) { try ControlRequest(json: .object(["command": .string("sendFiles"), "peer": .string("h2"), "files": .array([])])) }
        #expect(SendFilesResult(json: SendFilesResult(starts: [0, 7]).json) == SendFilesResult(starts: [0, 7]))
    }

    @Test func aStreamedOpenIsASessionOfItsOwnAndAsksForAnAnswerFirst() throws {
        let request = ControlRequest.open(.init(peer: "h2", bundleID: "com.example.notes", target: .streamedFile(name: "big.mov", size: 100 << 20)))
        #expect(try ControlRequest(json: request.json) == request)
        #expect(request.startsStreamSession)
        #expect(!ControlRequest.open(.init(peer: "h2", bundleID: "com.example.notes", target: .file(name: "a", data: [1]))).startsStreamSession)
        var open = OpenRequest(bundleID: "com.example.notes", fileName: "big.mov", fileSize: 100 << 20)
        open.answersFirst = true
        #expect(try PeerMessage(frame: PeerMessage.open(open).frame) == .open(open))
    }

    @Test func theFilesReceivedEventReadsAsASummary() throws {
        let received = ReceivedFiles(id: UUID(), peer: "h1", files: 3, bytes: 1_288_490_189, directory: "/home/u/Downloads")
        #expect(received.summary == "3 files from h1, 1.2 GiB")
        let event = AgentEvent(.filesReceived(received), at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(AgentEvent(json: event.json) == event)
        #expect(ByteCount.text(812) == "812 B")
    }

    @Test func aRelayedDirectionPassesFileFramesOnlyWhenAsked() {
        var stream = StreamDirectionStateMachine()
        #expect(stream.received(.fileEnd) == .fail(.unexpected(kind: .fileEnd, expecting: "stream data")))
        var files = StreamDirectionStateMachine(alsoRelaying: FileTransferMessage.kinds)
        #expect(files.received(.streamData) == .forward)
        #expect(files.received(.fileEnd) == .forward)
        #expect(files.received(.streamEnd) == .end)
        #expect(files.received(.fetch) == .fail(.unexpected(kind: .fetch, expecting: "stream data")))
    }

    @Test func aStalledSendNeverReachesItsFileEnd() {
        var budget = StreamStallBudget(bytes: 10)
        #expect(budget.received(.fileEnd, payloadBytes: 40) == .pass)
        #expect(budget.received(.streamData, payloadBytes: 10) == .pass)
        #expect(budget.received(.fileEnd, payloadBytes: 40) == .drop)
        #expect(budget.received(.fileReceived, payloadBytes: 40) == .drop)
    }
}
