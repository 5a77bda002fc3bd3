import HandoffCore
import Testing

@Suite("FaultPlan: the faults `handoff fault` and the faults section set")
struct FaultPlanTests {
    @Test("NAME=VALUE sets each fault; list shows it; clear turns it off")
    func assignments() throws {
        var plan = FaultPlan()
        #expect(plan.isEmpty)
        try plan.apply(assignment: "payloadDelayMs=3000")
        try plan.apply(assignment: "dropAfterBytes=0")
        try plan.apply(assignment: "stallStreamAfterBytes=65536")
        try plan.apply(assignment: "corruptFrame=true")
        try plan.apply(assignment: "refuseConnections=on")
        try plan.apply(assignment: "willSaveDelayMs=250")
        try plan.apply(assignment: "advertiseGoneData=1")
        #expect(plan.payloadDelay == .seconds(3))
        #expect(plan.dropAfterBytes == 0, "0 bytes is a fault too: close before the first byte")
        #expect(plan.stallStreamAfterBytes == 65536)
        #expect(plan.corruptFrame && plan.refuseConnections && plan.advertiseGoneData)
        #expect(plan.willSaveDelay == .milliseconds(250))
        #expect(plan.active == FaultPlan.Fault.allCases)
        #expect(plan.json["dropAfterBytes"] == .integer(0))
        #expect(plan.json["corruptFrame"] == .bool(true))
        for fault in FaultPlan.Fault.allCases { plan.clear(fault) }
        #expect(plan.isEmpty)
    }

    @Test("bad names and values are refused with what to write")
    func refusals() {
        var plan = FaultPlan()
        #expect(throws: FaultPlanError.self) { try plan.apply(assignment: "payloadDelayMs") }
        #expect(throws: FaultPlanError.self) { try plan.apply(assignment: "slowness=3") }
        #expect(throws: FaultPlanError.self) { try plan.apply(assignment: "payloadDelayMs=-1") }
        #expect(throws: FaultPlanError.self) { try plan.apply(assignment: "payloadDelayMs=1.5") }
        #expect(throws: FaultPlanError.self) { try plan.apply(assignment: "corruptFrame=maybe") }
        #expect(throws: FaultPlanError.self) { try plan.apply(json: .object(["corruptFrame": .integer(3)])) }
        #expect(throws: FaultPlanError.self) { try plan.apply(json: .array([])) }
        #expect(plan.isEmpty, "a refused change changes nothing")
        do {
            try plan.apply(assignment: "slowness=3")
        } catch {
            #expect(error.description.contains("payloadDelayMs, dropAfterBytes"), "\(error)")
        }
    }

    @Test("JSON from the control protocol: numbers, booleans and strings")
    func json() throws {
        var plan = FaultPlan()
        try plan.apply(json: .object(["payloadDelayMs": .integer(10), "corruptFrame": .bool(true), "dropAfterBytes": .string("7")]))
        #expect(plan.payloadDelay == .milliseconds(10) && plan.corruptFrame && plan.dropAfterBytes == 7)
        try plan.apply(json: .object(["corruptFrame": .bool(false), "payloadDelayMs": .integer(0)]))
        #expect(plan.active == [.dropAfterBytes])
    }

    @Test("every fault documents the code the continuing side sees, in Apple's range")
    func codes() {
        for fault in FaultPlan.Fault.allCases {
            #expect(fault.code.isInReservedRange)
            #expect(fault.summary.contains("\(fault.code.rawValue)"), "\(fault): \(fault.summary)")
        }
    }
}
