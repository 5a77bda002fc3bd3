/// Deliberate misbehaviour of an agent, so that people can test their apps against the failures
/// a real network brings (docs/FAULTS.md). Faults act on the agent as a *source*: the side that
/// continues one of its activities sees the documented error code.
///
/// A plan comes from the `faults` section of the configuration and can be changed while the agent
/// runs with `handoff fault set NAME=VALUE` and `handoff fault clear`. It is a plain value: the
/// agent applies it where each fault belongs.
public struct FaultPlan: Sendable, Equatable {
    /// One kind of fault, named as in the configuration (`faults.<name>`) and the CLI.
    public enum Fault: String, CaseIterable, Sendable {
        case payloadDelayMs
        case dropAfterBytes
        case stallStreamAfterBytes
        case corruptFrame
        case refuseConnections
        case willSaveDelayMs
        case advertiseGoneData

        /// What kind of value the fault takes.
        public enum Value: Sendable { case milliseconds, bytes, flag }

        /// The value's kind.
        public var value: Value {
            switch self {
            case .payloadDelayMs, .willSaveDelayMs: .milliseconds
            case .dropAfterBytes, .stallStreamAfterBytes: .bytes
            case .corruptFrame, .refuseConnections, .advertiseGoneData: .flag
            }
        }

        /// The error code the continuing side sees.
        public var code: HandoffError.Code {
            switch self {
            case .payloadDelayMs, .willSaveDelayMs, .stallStreamAfterBytes: .userActivityRemoteApplicationTimedOut
            case .dropAfterBytes, .corruptFrame, .advertiseGoneData: .userActivityHandoffFailed
            case .refuseConnections: .userActivityConnectionUnavailable
            }
        }

        /// What the fault does and what the continuing side sees, for `handoff fault list`.
        public var summary: String {
            switch self {
            case .payloadDelayMs:
                "wait N ms before sending a fetched activity; a peer whose limits.fetchTimeout is shorter fails with 4610"
            case .dropAfterBytes:
                "close a fetch connection after sending N bytes of the answer (hello included); the peer fails with 4608"
            case .stallStreamAfterBytes:
                "after N bytes from the source app, continuation streams stop moving without closing; a peer with limits.streamIdleTimeout ends them with 4610"
            case .corruptFrame:
                "garble the activity frame of every answer; the peer refuses it as invalid data with 4608"
            case .refuseConnections:
                "close every peer connection as soon as it arrives (liveness probes too); peers fail with 4609"
            case .willSaveDelayMs:
                "the source app's userActivityWillSave takes N ms longer (for activities that need saving); past the fetch timeout the peer fails with 4610"
            case .advertiseGoneData:
                "keep advertising activities but answer fetches as if their data were gone; the peer fails with 4608"
            }
        }
    }

    /// `faults.payloadDelayMs`.
    public var payloadDelay: Duration = .zero
    /// `faults.dropAfterBytes`; nil: off.
    public var dropAfterBytes: Int?
    /// `faults.stallStreamAfterBytes`; nil: off.
    public var stallStreamAfterBytes: Int?
    /// `faults.corruptFrame`.
    public var corruptFrame = false
    /// `faults.refuseConnections`.
    public var refuseConnections = false
    /// `faults.willSaveDelayMs`.
    public var willSaveDelay: Duration = .zero
    /// `faults.advertiseGoneData`.
    public var advertiseGoneData = false

    /// No fault.
    public init() {}

    /// Whether no fault is active.
    public var isEmpty: Bool { self == FaultPlan() }

    /// The active faults.
    public var active: [Fault] { Fault.allCases.filter { valueText($0) != nil } }

    /// A fault's value as `handoff fault list` shows it; nil when it is off.
    public func valueText(_ fault: Fault) -> String? {
        switch fault {
        case .payloadDelayMs: payloadDelay > .zero ? "\(payloadDelay.wholeMilliseconds)" : nil
        case .willSaveDelayMs: willSaveDelay > .zero ? "\(willSaveDelay.wholeMilliseconds)" : nil
        case .dropAfterBytes: dropAfterBytes.map { "\($0)" }
        case .stallStreamAfterBytes: stallStreamAfterBytes.map { "\($0)" }
        case .corruptFrame: corruptFrame ? "true" : nil
        case .refuseConnections: refuseConnections ? "true" : nil
        case .advertiseGoneData: advertiseGoneData ? "true" : nil
        }
    }

    /// Sets a fault from its text form: milliseconds and bytes as whole numbers of 0 or more,
    /// flags as `true` or `false`. A bad value is refused with what to write instead.
    public mutating func set(_ fault: Fault, to text: String) throws(FaultPlanError) {
        switch fault.value {
        case .milliseconds, .bytes:
            guard let number = Int(text), number >= 0, number <= 86_400_000 || fault.value == .bytes else {
                throw FaultPlanError(fault.rawValue, "must be a whole number of \(fault.value == .bytes ? "bytes" : "milliseconds") from 0, not \"\(text)\"")
            }
            set(fault, number: number)
        case .flag:
            switch text.lowercased() {
            case "true", "1", "on", "yes": set(fault, flag: true)
            case "false", "0", "off", "no": set(fault, flag: false)
            default: throw FaultPlanError(fault.rawValue, "must be true or false, not \"\(text)\"")
            }
        }
    }

    /// Sets a numeric fault (milliseconds or bytes).
    public mutating func set(_ fault: Fault, number: Int) {
        switch fault {
        case .payloadDelayMs: payloadDelay = .milliseconds(number)
        case .willSaveDelayMs: willSaveDelay = .milliseconds(number)
        case .dropAfterBytes: dropAfterBytes = number
        case .stallStreamAfterBytes: stallStreamAfterBytes = number
        case .corruptFrame, .refuseConnections, .advertiseGoneData: set(fault, flag: number != 0)
        }
    }

    /// Sets a flag fault.
    public mutating func set(_ fault: Fault, flag: Bool) {
        switch fault {
        case .corruptFrame: corruptFrame = flag
        case .refuseConnections: refuseConnections = flag
        case .advertiseGoneData: advertiseGoneData = flag
        case .payloadDelayMs, .willSaveDelayMs, .dropAfterBytes, .stallStreamAfterBytes: if !flag { clear(fault) }
        }
    }

    /// Turns a fault off.
    public mutating func clear(_ fault: Fault) {
        switch fault {
        case .payloadDelayMs: payloadDelay = .zero
        case .willSaveDelayMs: willSaveDelay = .zero
        case .dropAfterBytes: dropAfterBytes = nil
        case .stallStreamAfterBytes: stallStreamAfterBytes = nil
        case .corruptFrame: corruptFrame = false
        case .refuseConnections: refuseConnections = false
        case .advertiseGoneData: advertiseGoneData = false
        }
    }

    /// Parses `NAME=VALUE` as `handoff fault set` takes it.
    public mutating func apply(assignment: String) throws(FaultPlanError) {
        guard let equals = assignment.firstIndex(of: "=") else {
            throw FaultPlanError(assignment, "write NAME=VALUE, e.g. payloadDelayMs=3000 or refuseConnections=true")
        }
        let fault = try Self.fault(named: String(assignment[..<equals]))
        try set(fault, to: String(assignment[assignment.index(after: equals)...]))
    }

    /// The fault with this name; an unknown name is refused with the list of names.
    public static func fault(named name: String) throws(FaultPlanError) -> Fault {
        guard let fault = Fault(rawValue: name) else {
            throw FaultPlanError(name, "is not a fault; the faults are \(Fault.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return fault
    }

    /// The active faults as a JSON object (`{"payloadDelayMs": 3000, "corruptFrame": true}`).
    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        for fault in active {
            switch fault.value {
            case .flag: members[fault.rawValue] = .bool(true)
            case .milliseconds, .bytes: members[fault.rawValue] = .integer(Int(valueText(fault)!)!)
            }
        }
        return .object(members)
    }

    /// Applies a JSON object of faults (the control protocol's `set`): numbers for milliseconds
    /// and bytes, booleans for flags.
    public mutating func apply(json: JSONValue) throws(FaultPlanError) {
        guard case .object(let members) = json else { throw FaultPlanError("set", "must be an object of fault names and values") }
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            let fault = try Self.fault(named: name)
            switch (fault.value, value) {
            case (.flag, .bool(let flag)): set(fault, flag: flag)
            case (.milliseconds, .number(let text)), (.bytes, .number(let text)), (_, .string(let text)): try set(fault, to: text)
            default: throw FaultPlanError(name, fault.value == .flag ? "must be true or false" : "must be a whole number from 0")
            }
        }
    }
}

/// A fault name or value that cannot be used, with what to write instead.
public struct FaultPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The fault (or text) that was refused.
    public var name: String
    /// Why, and what to write instead.
    public var reason: String

    public init(_ name: String, _ reason: String) {
        self.name = name
        self.reason = reason
    }

    public var description: String { "fault \(name): \(reason)" }
}
