// Writes the seed corpora, Fuzz/Corpus/<target>/, from the real encoders: frames as agents send
// them, userInfo encodings of every type, TXT records as an agent builds them, configuration files,
// and JSON as the CLI and the control socket carry it; plus a few hand-made edge cases for each.
//
//   scripts/fuzz --seeds                      (builds this without the sanitizer and runs it)
//   FuzzSeeds <corpus directory> [<config/handoffd.json>]
//
// Deterministic: fixed IDs and dates, so regenerating changes nothing unless an encoder changed.
// Each target directory is emptied first.

import HandoffCore
import HandoffTrust

import Foundation

// FuzzSeeds is built in the same package as the fuzz targets; when that build uses
// -sanitize=fuzzer, libFuzzer is linked into every executable and needs this symbol. Unused here.
@_cdecl("LLVMFuzzerTestOneInput")
public func unusedFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { 0 }

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: FuzzSeeds <corpus directory> [<config/handoffd.json>]\n".utf8))
    exit(64)
}
let corpus = URL(fileURLWithPath: arguments[1], isDirectory: true)
let sampleConfigPath = arguments.count >= 3 ? arguments[2] : nil

// MARK: - Output

var written: [String: Int] = [:]

@MainActor func directory(_ target: String) -> URL {
    let dir = corpus.appendingPathComponent(target, isDirectory: true)
    if written[target] == nil {
        try? FileManager.default.removeItem(at: dir)
        try! FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        written[target] = 0
    }
    return dir
}

@MainActor func seed(_ target: String, _ name: String, _ bytes: [UInt8]) {
    let url = directory(target).appendingPathComponent(name)
    try! Data(bytes).write(to: url)
    written[target, default: 0] += 1
}

@MainActor func seed(_ target: String, _ name: String, _ text: String) { seed(target, name, Array(text.utf8)) }

// MARK: - Sample values

let activityID = UUID(uuidString: "8C1D3F0A-2B6E-4F55-9B62-3C1A2D4E5F60")!
let continuationID = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!
let agentID = "3f2a9c1d5e6b4a7f8c9d0e1f2a3b4c5d"
let notesEdit = ActivityType(rawValue: "com.example.notes.edit")!
/// 2025-11-22T10:00:00.250Z.
let sampleDate = Date(timeIntervalSince1970: 1_763_805_600.25)

let everyType: UserInfo = [
    "string": .string("Grüße, 世界 🌍"),
    "empty": .string(""),
    "integer": .integer(42),
    "negative": .integer(-7),
    "int64Min": .integer(.min),
    "int64Max": .integer(.max),
    "double": .double(3.25),
    "tiny": .double(.leastNonzeroMagnitude),
    "nan": .double(.nan),
    "negativeZero": .double(-0.0),
    "infinity": .double(.infinity),
    "true": .bool(true),
    "false": .bool(false),
    "data": .data(Data([0x00, 0x01, 0x7F, 0x80, 0xFF])),
    "emptyData": .data(Data()),
    "date": .date(sampleDate),
    "url": .url(URL(string: "https://notes.example.com/n/42?tab=edit&q=a%20b#s2")!),
    "uuid": .uuid(activityID),
    "null": .null,
    "array": .array([.integer(1), .double(1), .string("1"), .array([]), .dictionary([:]), .null]),
    "dictionary": .dictionary(["nested": .dictionary(["deeper": .array([.bool(true), .data(Data([1, 2, 3]))])]), "ключ": .string("значение")]),
    "日本語": .string("non-ASCII key"),
]

let notesUserInfo: UserInfo = ["text": .string("milk, eggs"), "cursor": .integer(12)]

let minimalActivity = Activity(id: activityID, activityType: notesEdit)
let fullActivity = Activity(
    id: activityID, activityType: notesEdit, title: "Shopping list", userInfo: notesUserInfo,
    requiredUserInfoKeys: ["text"], targetContentIdentifier: "note-42", needsSave: true,
    contentAttributeSet: ["displayName": .string("Shopping list"), "rating": .double(4.5)],
    keywords: ["shopping", "list"], persistentIdentifier: "note-42", isEligibleForHandoff: true,
    isEligibleForSearch: true, isEligibleForPublicIndexing: false, isEligibleForPrediction: true,
    expirationDate: sampleDate, webpageURL: URL(string: "https://notes.example.com/n/42")!,
    referrerURL: URL(string: "https://example.com/")!, supportsContinuationStreams: true)

func nested(_ depth: Int, array: Bool) -> PropertyListValue {
    var v: PropertyListValue = .integer(1)
    for _ in 0..<depth { v = array ? .array([v]) : .dictionary(["k": v]) }
    return v
}

func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
func header(_ kind: UInt8, _ length: UInt32) -> [UInt8] { [kind] + u32(length) }
func plist(_ v: PropertyListValue) -> [UInt8] { PropertyListBinaryCoding.encode(v) }

// MARK: - FuzzUserInfoDecoder: the binary property-list encoding

do {
    let t = "FuzzUserInfoDecoder"
    let values: [(String, PropertyListValue)] = [
        ("null", .null), ("true", .bool(true)), ("false", .bool(false)),
        ("integer-0", .integer(0)), ("integer-minus1", .integer(-1)), ("integer-min", .integer(.min)), ("integer-max", .integer(.max)),
        ("double", .double(3.25)), ("double-negzero", .double(-0.0)), ("double-nan", .double(.nan)),
        ("double-inf", .double(-.infinity)), ("double-subnormal", .double(.leastNonzeroMagnitude)),
        ("string-empty", .string("")), ("string-unicode", .string("Grüße, 世界 🌍 👨‍👩‍👧‍👦")),
        ("data", .data(Data([0x00, 0x01, 0x7F, 0x80, 0xFF]))), ("data-empty", .data(Data())),
        ("date", .date(sampleDate)), ("date-fraction", .date(Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_789))),
        ("url", .url(URL(string: "https://notes.example.com/n/42?tab=edit#s2")!)), ("url-mailto", .url(URL(string: "mailto:a@example.com")!)),
        ("uuid", .uuid(activityID)),
        ("array-empty", .array([])), ("array-mixed", .array([.integer(1), .double(1), .string("1"), .null])),
        ("dictionary-empty", .dictionary([:])),
        ("userinfo-notes", .dictionary(notesUserInfo)), ("userinfo-every-type", .dictionary(everyType)),
        ("activity-fields", .dictionary(fullActivity.propertyList())),
        ("nested-64-arrays", nested(64, array: true)), ("nested-64-dictionaries", nested(64, array: false)),
    ]
    for (name, value) in values { seed(t, "\(name).bin", plist(value)) }
    // Refused: too deep, trailing byte, truncated, duplicate key, bad UTF-8, lengths beyond the input.
    seed(t, "bad-nested-65.bin", plist(nested(65, array: true)))
    seed(t, "bad-trailing-byte.bin", plist(.dictionary(notesUserInfo)) + [0x00])
    seed(t, "bad-truncated.bin", Array(plist(.dictionary(notesUserInfo)).dropLast(3)))
    seed(t, "bad-duplicate-key.bin", [0x0B] + u32(2) + u32(1) + [0x61, 0x00] + u32(1) + [0x61, 0x01])
    seed(t, "bad-utf8-string.bin", [0x05] + u32(2) + [0xC3, 0x28])
    seed(t, "bad-string-4gib.bin", [0x05] + u32(0xFFFF_FFFF) + [0x41, 0x42, 0x43, 0x44])
    seed(t, "bad-array-count.bin", [0x0A] + u32(0x8000_0000) + [0x00])
    seed(t, "bad-dictionary-count.bin", [0x0B] + u32(0x7FFF_FFFF) + u32(0) + [0x00])
    seed(t, "bad-url.bin", [0x08] + u32(3) + Array("a b".utf8))
    seed(t, "bad-tag.bin", [0x0C])
}

// MARK: - FuzzFrameDecoder: byte 0 = number of chunk-size bytes (low 3 bits), then sizes, then the stream

do {
    let t = "FuzzFrameDecoder"
    let clientHello = PeerMessage.hello(PeerHello(agentID: agentID, name: "h1")).frame
    let serverHello = PeerMessage.hello(PeerHello(versions: [1], agentID: "0123456789abcdef0123456789abcdef", name: "h2")).frame
    let fetch = PeerMessage.fetch(FetchRequest(activityID: activityID, continuationID: continuationID)).frame
    let activity = PeerMessage.activity(fullActivity).frame
    let minimal = PeerMessage.activity(minimalActivity).frame
    let userInfo = PeerMessage.userInfo(notesUserInfo).frame
    let everyTypeFrame = PeerMessage.userInfo(everyType).frame
    let error = PeerMessage.error(code: 4608, message: "no longer offered: resigned").frame
    // Kind 0x06, continued: the same body as fetch (built by hand so the corpus does not depend on it).
    let continued = Frame(kind: FrameKind(rawValue: 0x06), payload: fetch.payload)
    var withSource = fullActivity.propertyList(includingUserInfo: false)
    withSource["sourceBundleID"] = .string("com.example.notes")
    withSource["sourceTeamID"] = .string("A1B2C3D4E5")
    let activityWithSource = Frame(kind: .activity, payload: plist(.dictionary(withSource)))
    let subscribe = PeerMessage.subscribe.frame
    let advertisement = PeerMessage.advertisement(instanceName: "handoff-0123456789ab", txtRecord: [4, 0x76, 0x3d, 0x32, 0x00]).frame
    let controlRequest = ControlProtocol.request("publish", ["activity": fullActivity.json])
    let controlResponse = ControlProtocol.response(.success(.object(["id": .string(activityID.uuidString)])))

    let whole: [UInt8] = [0x00]
    let frames: [(String, Frame)] = [
        ("hello-client", clientHello), ("hello-server", serverHello), ("fetch", fetch), ("activity-full", activity),
        ("activity-minimal", minimal), ("activity-with-source", activityWithSource), ("userinfo-notes", userInfo),
        ("userinfo-every-type", everyTypeFrame), ("error-4608", error), ("continued", continued),
        ("control-request", controlRequest), ("control-response", controlResponse), ("subscribe", subscribe),
        ("advertisement", advertisement),
    ]
    for (name, frame) in frames { seed(t, "\(name).bin", whole + frame.bytes) }

    // Whole exchanges, as each side reads them, whole and in chunks.
    let fromClient = clientHello.bytes + fetch.bytes
    let fromSource = serverHello.bytes + activity.bytes + userInfo.bytes
    seed(t, "exchange-client.bin", whole + fromClient)
    seed(t, "exchange-source.bin", whole + fromSource)
    seed(t, "exchange-source-1-byte-chunks.bin", [0x01, 0x00] + fromSource)
    seed(t, "exchange-source-varied-chunks.bin", [0x03, 0x04, 0x00, 0x10] + fromSource)
    seed(t, "exchange-client-header-split.bin", [0x02, 0x02, 0xFF] + fromClient)
    seed(t, "exchange-source-error.bin", whole + serverHello.bytes + error.bytes)

    // Limits: userInfo at and over maxUserInfoBytes; empty frames; refused headers; bad payloads.
    let padded3072: UserInfo = ["text": .string(String(repeating: "x", count: 3072 - 1 - 4 - 4 - 4 - 1 - 4))]
    let atLimit = PeerMessage.userInfo(padded3072).frame
    seed(t, "userinfo-at-limit-3072.bin", whole + atLimit.bytes)
    seed(t, "userinfo-over-limit-header.bin", whole + header(0x04, 3073) + Array(repeating: 0, count: 16))
    seed(t, "hello-over-64k-header.bin", whole + header(0x01, 65537))
    seed(t, "length-ffffffff.bin", whole + header(0x03, 0xFFFF_FFFF))
    seed(t, "length-80000000.bin", whole + header(0x02, 0x8000_0000))
    seed(t, "unknown-kind.bin", whole + header(0x07, 0) + fetch.bytes)
    seed(t, "empty-payloads.bin", whole + header(0x01, 0) + header(0x02, 0) + header(0x03, 0) + header(0x04, 0) + header(0x05, 0))
    seed(t, "truncated-activity.bin", whole + Array(activity.bytes.dropLast(7)))
    seed(t, "hello-wrong-protocol.bin", whole + Frame(kind: .hello, payload: plist(.dictionary([
        "protocol": .string("http"), "versions": .array([.integer(1)]), "agentID": .string(agentID), "name": .string("h1")]))).bytes)
    seed(t, "hello-version-0.bin", whole + Frame(kind: .hello, payload: plist(.dictionary([
        "protocol": .string("handoff"), "versions": .array([.integer(0)]), "agentID": .string(agentID), "name": .string("h1")]))).bytes)
    seed(t, "activity-bad-type.bin", whole + Frame(kind: .activity, payload: plist(.dictionary([
        "id": .uuid(activityID), "activityType": .string("not reverse dns")]))).bytes)
    seed(t, "error-huge-code.bin", whole + Frame(kind: .error, payload: plist(.dictionary([
        "code": .integer(.max), "message": .string("")]))).bytes)
}

// MARK: - FuzzTXTParser: TXT rdata as an agent builds it

do {
    let t = "FuzzTXTParser"
    func ad(_ seq: UInt64, _ current: ActivityAdvertisement.Current?) -> [UInt8] {
        ActivityAdvertisement(agentID: agentID, sequence: seq, current: current).txtRecord
    }
    seed(t, "idle.txt", ad(0, nil))
    seed(t, "current.txt", ad(7, .init(id: activityID, activityType: notesEdit, title: "Shopping list")))
    seed(t, "current-no-title.txt", ad(8, .init(id: activityID, activityType: notesEdit, title: nil)))
    seed(t, "current-empty-title.txt", ad(9, .init(id: activityID, activityType: notesEdit, title: "")))
    seed(t, "current-unicode-title.txt", ad(10, .init(id: activityID, activityType: notesEdit, title: "Grüße 🌍 👨‍👩‍👧‍👦 e\u{301}")))
    seed(t, "current-long-title.txt", ad(11, .init(id: activityID, activityType: notesEdit, title: String(repeating: "Ω", count: 300))))
    seed(t, "current-team.txt", ad(12, .init(id: activityID, activityType: notesEdit, title: "Shopping list", teamID: "A1B2C3D4E5")))
    seed(t, "browsing-web.txt", ad(13, .init(id: activityID, activityType: .browsingWeb, title: "Example")))
    seed(t, "seq-max.txt", ad(.max, .init(id: activityID, activityType: ActivityType(rawValue: "a." + String(repeating: "b", count: 198))!, title: "x")))

    func record(_ strings: [String]) -> [UInt8] { strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } }
    seed(t, "uppercase-keys.txt", record(["V=2", "ID=\(agentID)", "SEQ=3"]))
    seed(t, "duplicate-keys.txt", record(["v=2", "id=\(agentID)", "id=other", "seq=3", "seq=4"]))
    seed(t, "boolean-attribute.txt", record(["flag", "v=2", "=nokey", "id=\(agentID)", "seq=1"]))
    seed(t, "version-1.txt", record(["v=1", "id=\(agentID)", "seq=1"]))
    seed(t, "no-version.txt", record(["id=\(agentID)", "seq=1"]))
    seed(t, "seq-plus.txt", record(["v=+2", "id=\(agentID)", "seq=+5"]))
    seed(t, "aid-lowercase.txt", record(["v=2", "id=\(agentID)", "seq=1", "aid=\(activityID.uuidString.lowercased())", "type=com.example.x"]))
    seed(t, "aid-no-type.txt", record(["v=2", "id=\(agentID)", "seq=1", "aid=\(activityID.uuidString)"]))
    seed(t, "tid-empty.txt", record(["v=2", "id=\(agentID)", "seq=1", "aid=\(activityID.uuidString)", "type=com.example.x", "tid="]))
    seed(t, "empty.txt", [])
    seed(t, "zero-length-string.txt", [0x00] + record(["v=2", "id=\(agentID)", "seq=1"]))
    seed(t, "length-past-end.txt", record(["v=2", "id=\(agentID)"]) + [0xFF, 0x73, 0x65, 0x71])
    seed(t, "bad-utf8.txt", record(["v=2", "id=\(agentID)", "seq=1"]) + [0x07, 0x74, 0x69, 0x74, 0x6C, 0x65, 0x3D, 0xFF])
}

// MARK: - FuzzSealedTXT: sealed TXT records as an agent publishes them (protocol v2)

do {
    let t = "FuzzSealedTXT"
    // Not a key the target opens with: it checks that no input it did not seal itself opens, so a
    // seed sealed with its own key would be a false failure. Real records, sealed by another
    // device, are exactly that.
    let key = try! AdvertisingKey(bytes: Array(64..<96))
    func inner(_ current: ActivityAdvertisement.Current?) -> [UInt8] {
        ActivityAdvertisement(agentID: agentID, sequence: 3, current: current, name: "h1").txtRecord(maximumSize: SealedAdvertisement.maximumPlaintextBytes)
    }
    // Sealing uses a random nonce: these files differ on every run, as the records on the wire do.
    // Records are signed with a device key (v=3): a throwaway identity made for this run.
    let identity = try! DeviceIdentity.loadOrCreate(directory: "/tmp/handoff-fuzz-seeds-\(getpid())", commonName: "seed device")
    let instance = "handoff-0123456789ab"
    seed(t, "idle.txt", SealedAdvertisement.txtRecord(sealing: inner(nil), timestamp: 1_800_000_000_000, instanceName: instance, key: key, identity: identity))
    seed(t, "current.txt", SealedAdvertisement.txtRecord(
        sealing: inner(.init(id: activityID, activityType: notesEdit, title: "Shopping list")), timestamp: 1_800_000_000_001,
        instanceName: instance, key: key, identity: identity))
    seed(t, "pairing.txt", SealedAdvertisement.txtRecord(sealing: inner(nil), timestamp: 2, instanceName: instance, key: key, identity: identity,
                                                         pairingName: "kitchen"))
    seed(t, "longest.txt", SealedAdvertisement.txtRecord(
        sealing: inner(.init(id: activityID, activityType: notesEdit, title: String(repeating: "Ω", count: 400), teamID: "A1B2C3D4E5")),
        timestamp: .max, instanceName: instance, key: key, identity: identity, pairingName: String(repeating: "n", count: 300)))
    func record(_ strings: [String]) -> [UInt8] { strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) } }
    seed(t, "version-only.txt", record(["v=3"]))
    seed(t, "gap.txt", record(["v=3", "s0=AAAA", "s2=AAAA"]))
    seed(t, "bad-base64.txt", record(["v=3", "s0=!!!!"]))
    seed(t, "plain-v1.txt", record(["v=1", "id=\(agentID)", "seq=1"]))
}

// MARK: - FuzzConfigParser: handoffd's configuration file

do {
    let t = "FuzzConfigParser"
    if let sampleConfigPath, let sample = FileManager.default.contents(atPath: sampleConfigPath) {
        seed(t, "handoffd.json", Array(sample))
    }
    func config(_ members: [String: JSONValue]) -> String { JSONValue.object(members).prettySerialized + "\n" }
    let handler: JSONValue = .object(["activityTypes": .array([.string("com.example.notes.edit")]), "command": .array([.string("/usr/local/bin/open-note")])])
    let everyKey: [String: JSONValue] = [
        "name": .string("h1"), "port": .integer(7000), "listenAddress": .string("198.18.0.1"),
        "socketPath": .string("/run/user/1000/handoff/handoffd.sock"), "serviceType": .string("_handoff._tcp"),
        "limits": .object(["maxUserInfoBytes": .integer(3072), "connectTimeout": .number("2"), "fetchTimeout": .number("5.5"), "handlerTimeout": .number("30")]),
        "handlers": .array([handler, .object(["activityTypes": .array([.string("*")]), "command": .array([.string("/bin/cat")]), "//note": .string("catch-all")])]),
        "urlOpener": .array([.string("xdg-open")]), "logLevel": .string("debug"), "faults": .object(["payloadDelayMs": .integer(250)]),
    ]
    seed(t, "empty-object.json", "{}\n")
    seed(t, "every-key.json", config(everyKey))
    seed(t, "comments.json", config(["//": .string("comment"), "limits": .object(["//fetchTimeout": .string("comment"), "fetchTimeout": .number("0.001")])]))
    seed(t, "handlers-browsing-web.json", config(["handlers": .array([.object(["activityTypes": .array([.string("NSUserActivityTypeBrowsingWeb")]), "command": .array([.string("firefox"), .string("--new-tab")])])])]))
    seed(t, "limits-extremes.json", config(["limits": .object(["maxUserInfoBytes": .integer(16 * 1024 * 1024), "connectTimeout": .number("3600"), "fetchTimeout": .number("1e-3"), "handlerTimeout": .number("3.6E3")])]))
    // Refused, each naming a key.
    seed(t, "bad-unknown-key.json", config(["prot": .integer(1)]))
    seed(t, "bad-unknown-limit.json", config(["limits": .object(["fetchTimeOut": .integer(5)])]))
    seed(t, "bad-port-string.json", config(["port": .string("7000")]))
    seed(t, "bad-port-range.json", config(["port": .integer(65536)]))
    seed(t, "bad-port-float.json", config(["port": .number("7000.0")]))
    seed(t, "bad-port-huge.json", config(["port": .number("99999999999999999999")]))
    seed(t, "bad-timeout-string.json", config(["limits": .object(["fetchTimeout": .string("5s")])]))
    seed(t, "bad-timeout-range.json", config(["limits": .object(["connectTimeout": .number("0"), "handlerTimeout": .number("1e400")])]))
    seed(t, "bad-max-userinfo.json", config(["limits": .object(["maxUserInfoBytes": .integer(0)])]))
    seed(t, "bad-delay-negative.json", config(["faults": .object(["payloadDelayMs": .integer(-1)])]))
    seed(t, "bad-handler-empty-command.json", config(["handlers": .array([.object(["activityTypes": .array([.string("*")]), "command": .array([])])])]))
    seed(t, "bad-handler-no-command.json", config(["handlers": .array([.object(["activityTypes": .array([.string("*")])])])]))
    seed(t, "bad-handler-type.json", config(["handlers": .array([.object(["activityTypes": .array([.string("notes")]), "command": .array([.string("x")])])])]))
    seed(t, "bad-handler-key.json", config(["handlers": .array([.object(["types": .array([.string("*")]), "command": .array([.string("x")])])])]))
    seed(t, "bad-handlers-object.json", config(["handlers": handler]))
    seed(t, "bad-name-long.json", config(["name": .string(String(repeating: "n", count: 64))]))
    seed(t, "bad-name-empty.json", config(["name": .string("")]))
    seed(t, "bad-socket-long.json", config(["socketPath": .string("/" + String(repeating: "s", count: 100))]))
    seed(t, "bad-service-type.json", config(["serviceType": .string("handoff.tcp")]))
    seed(t, "bad-log-level.json", config(["logLevel": .string("verbose")]))
    seed(t, "bad-url-opener.json", config(["urlOpener": .array([.string(""), .integer(1)])]))
    seed(t, "bad-limits-not-object.json", config(["limits": .integer(5)]))
    seed(t, "bad-dotted-key.json", config(["limits.fetchTimeout": .integer(5), "limits": .object(["fetchTimeout": .integer(6)])]))
    seed(t, "bad-array-root.json", "[]\n")
    seed(t, "bad-json.json", "{\"port\": 0,}\n")
}

// MARK: - FuzzJSONParser: JSON as the CLI, the control socket and handlers see it

do {
    let t = "FuzzJSONParser"
    let texts: [(String, String)] = [
        ("null", "null"), ("true", "true"), ("false", " false "), ("zero", "0"), ("negative-zero", "-0"),
        ("integer-max", "9223372036854775807"), ("integer-over", "9223372036854775808"), ("double", "3.25"),
        ("exponent", "-1.5E-300"), ("huge-exponent", "1e400"), ("one-point-zero", "1.0"),
        ("string-escapes", #""quote \" backslash \\ slash \/ \b\f\n\r\t \u00e9 \u0000 \ud83c\udf0d""#),
        ("string-unicode", "\"Grüße, 世界 🌍 e\u{301}\""),
        ("array", "[1, 2.0, \"3\", [], {}, null, true]"),
        ("object-nested", #"{"a": {"b": {"c": [1, {"d": "e"}]}}}"#),
        ("whitespace", " \t\r\n{ \"a\" :\n[ 1 ,2 ] }\r\n"),
        ("userinfo-notes", #"{"text": "milk, eggs", "cursor": 12}"#),
        ("control-status", #"{"command":"status"}"#),
        ("control-continue", "{\"command\":\"continue\",\"id\":\"\(activityID.uuidString)\"}"),
        ("control-error", #"{"error":{"code":4611,"name":"userActivityHandoffUserInfoTooLarge","message":"userInfo of 4000 bytes exceeds limits.maxUserInfoBytes (3072)"}}"#),
        ("tagged-dict", #"{"$dict": {"$url": "not a tag here"}}"#),
        ("tagged-date-seconds", #"{"d": {"$date": 1763805600.25}}"#),
        ("tagged-double", #"{"a": {"$double": "nan"}, "b": {"$double": "-inf"}, "c": {"$double": 1.5}}"#),
        ("deep-64", String(repeating: "[", count: 64) + String(repeating: "]", count: 64)),
        // Refused.
        ("bad-deep-65", String(repeating: "[", count: 65) + String(repeating: "]", count: 65)),
        ("bad-trailing-comma", "[1, 2,]"), ("bad-duplicate-key", #"{"a": 1, "a": 2}"#),
        ("bad-lone-surrogate", #""\ud800""#), ("bad-leading-zero", "01"), ("bad-trailing-text", "{} x"),
        ("bad-control-char", "\"a\u{01}b\""), ("bad-unterminated", #"{"a": "b"#),
    ]
    for (name, text) in texts { seed(t, "\(name).json", text) }
    seed(t, "bad-utf8.json", [0x22, 0xC3, 0x28, 0x22])
    seed(t, "userinfo-every-type.json", everyType.userInfoJSON.prettySerialized)
    seed(t, "activity-full.json", fullActivity.json.serialized)
    seed(t, "activity-minimal.json", #"{"activityType": "com.example.notes.edit"}"#)
    seed(t, "control-publish.json", String(decoding: ControlProtocol.request("publish", ["activity": fullActivity.json]).payload, as: UTF8.self))
    seed(t, "control-response.json", String(decoding: ControlProtocol.response(.success(.object(["id": .string(activityID.uuidString)]))).payload, as: UTF8.self))
}

for (target, count) in written.sorted(by: { $0.key < $1.key }) {
    print("\(target): \(count) seeds")
}
