import ArgumentParser
import HandoffCore
import HandoffTransport

import Foundation

struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Pair this device with another, so that each sees and continues the other's activities.",
        discussion: """
            Run `handoff pair --accept` on one device, then `handoff pair NAME` on the other (NAME as the accepting \
            device's agent is named, or its HOST:PORT). Both print the same six-digit code: check that they match and \
            answer y on both. Nothing is stored unless both confirm. Provisioning without a person: `handoff trust add`.
            """)
    @OptionGroup var options: GlobalOptions

    @Flag(name: .long, help: "Wait for another device to pair with this one (for security.pairingTimeout, default 120 s).")
    var accept = false

    @Flag(name: .long, help: "List the devices accepting pairing now, and stop.")
    var list = false

    @Argument(help: ArgumentHelp("The device to pair with: its name (shown while it accepts) or HOST:PORT.", valueName: "peer"))
    var peer: String?

    func validate() throws {
        if list { return }
        if accept, peer != nil { throw ValidationError("give either --accept or a peer, not both") }
        if !accept, peer == nil { throw ValidationError("give the device to pair with (its name or HOST:PORT), or --accept on the other device") }
    }

    func run() async throws {
        if list {
            guard let devices = try await options.call(.pairable, as: [PairableDevice].self) else { return }
            if devices.isEmpty { say("no device is accepting pairing (run `handoff pair --accept` on it)") }
            for device in devices { say("\(device.name)  \(device.address)") }
            return
        }
        if accept, !options.json { say("waiting for another device to pair (run `handoff pair NAME` there)...") }
        let json = options.json
        let result = await options.client.converse(.pair(accept ? .accept : .peer(peer!))) { event in
            let code: String, name: String, device: String
            switch event {
            case .pairRequest(let peer, let deviceID):
                // The accepting side: who asks, by the device ID its certificate proves, before any code.
                if json { print(event.json.serialized) } else { say("a device asks to pair: it calls itself \"\(peer)\", device \(deviceID)") }
                fflush(nil)
                return nil
            case .pairCode(let shown, let peer, let deviceID):
                (code, name, device) = (shown, peer, deviceID)
            default:
                return nil
            }
            if json {
                print(event.json.serialized)
            } else {
                // The name is the other device's own words (escaped, so it cannot draw on this
                // screen); the device ID is what its TLS certificate proves.
                say("pairing with \"\(name)\", device \(device)")
                say("code: \(code)")
                say("Does the other device show the same code, and this device's ID (`handoff status`)? [y/N] ", terminator: "")
            }
            fflush(nil)
            let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            if !json, isatty(0) == 0 { say(answer) }  // echo what was piped in, as a terminal would
            return AppReply(accept: answer == "y" || answer == "yes")
        }
        switch result {
        case .success(let value):
            if json { print(value.serialized) } else {
                let paired = TrustChange(json: value)
                say("paired with \(paired.name) (\(paired.deviceID))")
            }
        case .failure(let error):
            options.report(error)
            throw ExitCode(1)
        }
    }
}

struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, add or remove paired devices by device ID (for provisioning without a person).",
        subcommands: [TrustList.self, TrustAdd.self, TrustRemove.self])
}

struct TrustList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the paired devices.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        guard let devices = try await options.call(.trustList, as: [TrustedDevice].self) else { return }
        if devices.isEmpty { say("no paired devices (pair with `handoff pair`, or `handoff trust add DEVICE_ID`)") }
        for device in devices {
            let addresses = device.addresses.isEmpty ? "" : "  at \(device.addresses.joined(separator: ", "))"
            say("\(device.deviceID)  \(device.name)  \(device.online ? "online" : "not seen")\(addresses)")
        }
    }
}

struct TrustAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Pair with a device by its ID, as its `handoff status` prints it. The other device must add this one too.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The device ID (8 groups of 7 characters).", valueName: "device-id")) var deviceID: String
    @Option(name: .long, help: "A name for the device until it is seen.") var name: String?
    @Option(name: .customLong("address"), parsing: .singleValue,
            help: ArgumentHelp("Where the device can be reached without DNS-SD: HOST, HOST:PORT or [IPV6]:PORT (repeatable).", valueName: "address"))
    var addresses: [String] = []

    func validate() throws {
        for address in addresses {
            do { _ = try PeerAddress(parsing: address) } catch { throw ValidationError("--address: \(error)") }
        }
    }

    func run() async throws {
        let parsed = addresses.compactMap { try? PeerAddress(parsing: $0) }
        guard let added = try await options.call(.trustAdd(deviceID: deviceID, name: name, addresses: parsed), as: TrustChange.self, prettyJSON: false)
        else { return }
        say("trusted \(added.deviceID)")
    }
}

struct TrustRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Unpair a device: its connections close at once and this device's advertising key changes.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The device ID, as `handoff trust list` prints it.", valueName: "device-id")) var deviceID: String

    func run() async throws {
        guard let removed = try await options.call(.trustRemove(deviceID: deviceID), as: TrustChange.self, prettyJSON: false) else { return }
        say("removed \(removed.name) (\(removed.deviceID)); closed \(removed.closedConnections ?? 0) connection(s)")
    }
}
