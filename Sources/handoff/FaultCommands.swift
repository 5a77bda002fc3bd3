import ArgumentParser
import HandoffCore

struct Fault: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make this agent misbehave on purpose, to test apps against failures (docs/FAULTS.md).",
        discussion: """
            Faults act on this agent as a source: the host that continues one of its activities sees \
            the documented error code. They last until cleared or until the agent restarts; the \
            `faults` section of the configuration sets them at start, and again at a reload (SIGHUP) that changes it.
            """,
        subcommands: [FaultList.self, FaultSet.self, FaultClear.self],
        defaultSubcommand: FaultList.self)
}

/// Prints the faults: each with its value (or "off"), the code a peer sees and what it does.
private func printFaults(_ report: FaultsReport?) {
    for fault in report?.faults ?? [] {
        let value = fault.value ?? "off"
        say("\(fault.name.padding(toLength: 22, withPad: " ", startingAt: 0)) \(value.padding(toLength: 8, withPad: " ", startingAt: 0)) \(fault.code)  \(fault.summary)")
    }
}

struct FaultList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Show every fault, its value and the error code a peer sees.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        printFaults(try await options.call(.faults(set: nil, clear: nil), as: FaultsReport.self))
    }
}

struct FaultSet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Turn faults on: NAME=VALUE, e.g. payloadDelayMs=3000 dropAfterBytes=100 refuseConnections=true.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("Faults as NAME=VALUE (`handoff fault list` names them).", valueName: "name=value"))
    var assignments: [String]

    func validate() throws {
        guard !assignments.isEmpty else { throw ValidationError("name at least one fault, e.g. `handoff fault set payloadDelayMs=3000`") }
        var plan = FaultPlan()
        for assignment in assignments {
            do { try plan.apply(assignment: assignment) } catch { throw ValidationError("\(error)") }
        }
    }

    func run() async throws {
        var set: [String: JSONValue] = [:]
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            set[parts[0]] = .string(parts.count > 1 ? parts[1] : "")
        }
        printFaults(try await options.call(.faults(set: .object(set), clear: nil), as: FaultsReport.self))
    }
}

struct FaultClear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clear", abstract: "Turn faults off: the named ones, or all when none is named.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("Faults to turn off (default: all).", valueName: "name"))
    var names: [String] = []

    func validate() throws {
        for name in names {
            do { _ = try FaultPlan.fault(named: name) } catch { throw ValidationError("\(error)") }
        }
    }

    func run() async throws {
        printFaults(try await options.call(.faults(set: nil, clear: names.isEmpty ? .all : .named(names)), as: FaultsReport.self))
    }
}
