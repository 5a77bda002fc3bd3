import HandoffCore

extension Agent {
    /// `handoff fault set|clear|list`: applies `set` (an object of fault names and values), then
    /// clears the faults named in `clear` (`"all"` for every one), and answers with the faults
    /// now active and every fault's description. A bad name or value changes nothing.
    public func changeFaults(set: JSONValue?, clear: ControlRequest.FaultClearing?) -> Result<FaultsReport, HandoffError> {
        var plan = faults
        do {
            if let set { try plan.apply(json: set) }
            switch clear {
            case nil: break
            case .all?: plan = FaultPlan()
            case .named(let names)?:
                for name in names { plan.clear(try FaultPlan.fault(named: name)) }
            }
        } catch {
            return .failure(.handoffFailed("\(error); `handoff fault list` shows every fault"))
        }
        if plan != faults {
            logger.notice("faults changed", metadata: ["handoff.faults": "\(plan.json.serialized)"])
            faults = plan
        }
        return .success(faultsReport())
    }

    /// The active faults and the documentation of each.
    public func faultsReport() -> FaultsReport {
        FaultsReport(active: faults.json, faults: FaultPlan.Fault.allCases.map { fault in
            FaultsReport.Entry(name: fault.rawValue, value: faults.valueText(fault), code: fault.code.rawValue, summary: fault.summary)
        })
    }
}
