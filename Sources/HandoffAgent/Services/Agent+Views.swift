import HandoffCore
import HandoffTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Views for the CLI

    /// `handoff status`.
    public func statusJSON() -> JSONValue {
        let now = Date()
        return .object([
            "name": .string(configuration.name),
            "deviceID": .string(deviceID.description),
            "registeredName": advertiser.registeredName.map { .string($0) } ?? .null,
            "pairedDevices": .integer(trust.devices.count),
            "pairing": .bool(pairingWindow != nil),
            "agentID": .string(agentID),
            "port": .integer(port),
            "serviceType": .string(configuration.serviceType),
            "socketPath": .string(configuration.socketPath),
            "protocolVersion": .integer(PeerHello.supportedVersions.max()!),
            "sequence": .integer(store.sequence),
            "current": store.current(at: now).map { .string($0.id.uuidString) } ?? .null,
            "activities": .array(store.all.map { activity in
                .object([
                    "id": .string(activity.id.uuidString),
                    "activityType": .string(activity.activityType.rawValue),
                    "title": activity.title.map { .string($0) } ?? .null,
                    "expired": .bool(activity.isExpired(at: now)),
                ])
            }),
            "peers": .integer(directory.all.count),
            "apps": .array(apps.values.map { $0.manifest.json }),
            "streamPairs": .integer(openStreamPairs),
        ])
    }

    /// `handoff peers`.
    public func peersJSON() -> JSONValue {
        .array(directory.all.map { peer in
            .object([
                "name": .string(peer.name),
                "deviceID": peer.deviceID.map { .string($0.description) } ?? .null,
                "instanceName": .string(peer.instanceName),
                "agentID": .string(peer.advertisement.agentID),
                "host": .string(peer.hostTarget),
                "addresses": .array(peer.addresses.map { .string($0) }),
                "port": .integer(Int(peer.port)),
                "sequence": .integer(peer.advertisement.sequence),
                "current": peer.advertisement.current.map { .string($0.id.uuidString) } ?? .null,
                "reachable": .bool(directory.isReachable(peer)),
            ])
        })
    }

    /// `handoff list`.
    public func listJSON() -> JSONValue {
        .array(directory.offered.map { offered in
            .object([
                "id": .string(offered.id.uuidString),
                "peer": .string(offered.peer),
                "activityType": .string(offered.activityType.rawValue),
                "title": offered.title.map { .string($0) } ?? .null,
            ])
        })
    }
}
