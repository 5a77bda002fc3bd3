/// One check of `handoff doctor`: its verdict, what it saw and what to do.
///
/// The JSON form (`handoff doctor --json` prints an array of them) is
/// `{"check": NAME, "status": "ok"|"warn"|"fail", "detail": TEXT, "fix": TEXT}`; `fix` is empty
/// when there is nothing to do.
public struct DoctorFinding: Sendable, Equatable {
    /// A check's verdict.
    public enum Status: String, Sendable, Equatable, Comparable {
        case ok, warn, fail

        private var rank: Int {
            switch self {
            case .ok: 0
            case .warn: 1
            case .fail: 2
            }
        }

        public static func < (lhs: Status, rhs: Status) -> Bool { lhs.rank < rhs.rank }
    }

    /// The check's name (`agent`, `avahi`, `own-service`, `interfaces`, `firewall`, `resolved`,
    /// `peer <name>: dns-sd` …).
    public var check: String
    public var status: Status
    /// What the check saw.
    public var detail: String
    /// What to do about it (empty when nothing).
    public var fix: String

    public init(check: String, status: Status, detail: String, fix: String = "") {
        self.check = check
        self.status = status
        self.detail = detail
        self.fix = fix
    }

    /// The wire form.
    public var json: JSONValue {
        .object(["check": .string(check), "status": .string(status.rawValue), "detail": .string(detail), "fix": .string(fix)])
    }

    /// Reads the wire form; an unknown status reads as `warn`.
    public init(json: JSONValue) {
        self.init(check: json["check"]?.stringValue ?? "", status: json["status"]?.stringValue.flatMap(Status.init(rawValue:)) ?? .warn,
                  detail: json["detail"]?.stringValue ?? "", fix: json["fix"]?.stringValue ?? "")
    }
}
