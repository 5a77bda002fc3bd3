/// One file in a ``FileOffer``, as the sender describes it.
public struct OfferedFile: Sendable, Hashable {
    /// Its path inside the send, `/`-separated (`photos/a.jpg`); the receiver sanitises it
    /// (``ReceivedPath``).
    public var path: String
    /// Its size in bytes; nil for standard input, whose size is known only at its end.
    public var size: Int?
    /// Its permission bits (the receiver keeps at most `0o755` of them, and always `0o600`).
    public var mode: Int
    /// What the receiver keeps a partial copy of it under, for a later send of the same file to
    /// resume: 64 lowercase hex digits the sender derives from the file's identity, never from its
    /// contents (`FileResumeKey`), so nothing is read before the first byte goes; nil for standard
    /// input, which never resumes. The file's SHA-256 comes after its last byte (`fileEnd`).
    public var resumeKey: String?

    public init(path: String, size: Int?, mode: Int = 0o644, resumeKey: String? = nil) {
        self.path = path
        self.size = size
        self.mode = mode
        self.resumeKey = resumeKey
    }

    /// Whether the file may resume from a partial copy: its size and resume key are known up front.
    public var isResumable: Bool { size != nil && resumeKey != nil }
}

/// What `handoff send` offers a device: every file of the send, in the order its bytes follow.
public struct FileOffer: Sendable, Hashable {
    /// The most files one offer may list.
    public static let maximumFiles = 10_000

    public var files: [OfferedFile]

    public init(files: [OfferedFile]) {
        self.files = files
    }

    /// The sum of the known sizes.
    public var knownBytes: Int { files.reduce(0) { $0 + ($1.size ?? 0) } }

    /// Whether `text` is a SHA-256 (or a resume key) as the messages carry it: 64 lowercase hex digits.
    public static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    // MARK: Wire forms

    /// The control request's form: `[{"path", "size", "mode", "resumeKey"}]`.
    public var json: JSONValue {
        .array(files.map { file in
            var body: [String: JSONValue] = ["path": .string(file.path), "mode": .integer(file.mode)]
            if let size = file.size { body["size"] = .integer(size) }
            if let key = file.resumeKey { body["resumeKey"] = .string(key) }
            return .object(body)
        })
    }

    /// Reads the control request's form; the error names what is wrong.
    public init(json: JSONValue) throws(HandoffError) {
        guard let items = json.arrayValue, !items.isEmpty, items.count <= Self.maximumFiles else {
            throw .handoffFailed("sendFiles needs \"files\": a list of 1 to \(Self.maximumFiles) {\"path\", \"size\", \"mode\", \"resumeKey\"}")
        }
        var files: [OfferedFile] = []
        for item in items {
            guard let path = item["path"]?.stringValue else { throw .handoffFailed("sendFiles: every file needs a \"path\"") }
            let size = item["size"]?.int64Value.map { Int(clamping: $0) }
            let file = OfferedFile(path: path, size: size, mode: Int(clamping: item["mode"]?.int64Value ?? 0o644),
                                   resumeKey: item["resumeKey"]?.stringValue)
            try Self.check(file)
            files.append(file)
        }
        self.init(files: files)
    }

    /// The peer frame's form: `{"files": [{"path", "size", "mode", "resumeKey"}]}`.
    public var propertyList: PropertyListValue {
        .dictionary(["files": .array(files.map { file in
            var body: [String: PropertyListValue] = ["path": .string(file.path), "mode": .integer(Int64(file.mode))]
            if let size = file.size { body["size"] = .integer(Int64(size)) }
            if let key = file.resumeKey { body["resumeKey"] = .string(key) }
            return .dictionary(body)
        })])
    }

    /// Reads the peer frame's form.
    public init(propertyList fields: UserInfo) throws(HandoffError) {
        guard case .array(let items)? = fields["files"], !items.isEmpty, items.count <= Self.maximumFiles else {
            throw .handoffFailed("the offer must list 1 to \(Self.maximumFiles) files")
        }
        var files: [OfferedFile] = []
        for item in items {
            guard case .dictionary(let body) = item, case .string(let path)? = body["path"] else { throw .handoffFailed("an offered file has no path") }
            var size: Int?
            if case .integer(let n)? = body["size"] { size = Int(clamping: n) }
            var mode = 0o644
            if case .integer(let n)? = body["mode"] { mode = Int(clamping: n) }
            var resumeKey: String?
            if case .string(let key)? = body["resumeKey"] { resumeKey = key }
            let file = OfferedFile(path: path, size: size, mode: mode, resumeKey: resumeKey)
            try Self.check(file)
            files.append(file)
        }
        self.init(files: files)
    }

    private static func check(_ file: OfferedFile) throws(HandoffError) {
        if let size = file.size, size < 0 { throw .handoffFailed("\(file.path): a size must be 0 or more bytes") }
        if let key = file.resumeKey, !isSHA256(key) { throw .handoffFailed("\(file.path): \"resumeKey\" must be 64 lowercase hex digits") }
        guard (0...0o7777).contains(file.mode) else { throw .handoffFailed("\(file.path): \"mode\" must be permission bits (0 to 0o7777)") }
    }
}
