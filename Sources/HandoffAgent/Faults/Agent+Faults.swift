import HandoffCore

extension Agent {
    /// `handoff fault set|clear|list`: applies `set` (an object of fault names and values), then
    /// clears the faults named in `clear` (`"all"` for every one), and answers with the faults
    /// now active and every fault's description. A bad name or value changes nothing.
    public func changeFaults(set: JSONValue?, clear: JSONValue?) -> Result<JSONValue, HandoffError> {
        var plan = faults
        do {
            if let set { try plan.apply(json: set) }
            switch clear {
            case nil, .null?: break
            case .string("all")?: plan = FaultPlan()
            case .array(let names)?:
                for name in names {
                    guard let text = name.stringValue else { throw FaultPlanError("clear", "must list fault names") }
                    plan.clear(try FaultPlan.fault(named: text))
                }
            default: throw FaultPlanError("clear", "must be \"all\" or a list of fault names")
            }
        } catch {
            return .failure(.handoffFailed("\(error); `handoff fault list` shows every fault"))
        }
        if plan != faults {
            logger.notice("faults changed", metadata: ["handoff.faults": "\(plan.json.serialized)"])
            faults = plan
        }
        return .success(faultsJSON())
    }

    /// The active faults and the documentation of each.
    public func faultsJSON() -> JSONValue {
        .object([
            "active": faults.json,
            "faults": .array(FaultPlan.Fault.allCases.map { fault in
                .object([
                    "name": .string(fault.rawValue),
                    "value": faults.valueText(fault).map { .string($0) } ?? .null,
                    "code": .integer(fault.code.rawValue),
                    "summary": .string(fault.summary),
                ])
            }),
        ])
    }
}
