import HandoffCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A device this one is paired with.
public struct PairedDevice: Sendable, Hashable {
    /// Who the device is.
    public var deviceID: DeviceID
    /// The name the person gave it (or the name it announced when pairing).
    public var name: String
    /// The key it seals its advertisements with; nil until it has told us.
    public var advertisingKey: AdvertisingKey?
    /// The key it signs its advertisements with, from its certificate; nil until a TLS connection
    /// with it showed the certificate.
    public var publicKey: DevicePublicKey?
    /// When it was paired, to the second (as stored).
    public var pairedAt: Date
    /// Where it can be reached without DNS-SD (`trust add --address`, `pair HOST:PORT`).
    public var addresses: [PeerAddress]
    /// Where it was last found (resolved over DNS-SD, or where it announced itself), each with its
    /// port: a restarting agent reaches it there at once, before DNS-SD has shown anything.
    public var lastKnownAddresses: [PeerAddress]

    /// Creates a paired device; `pairedAt` is rounded down to the second, as it is stored.
    public init(deviceID: DeviceID, name: String, advertisingKey: AdvertisingKey? = nil, publicKey: DevicePublicKey? = nil,
                pairedAt: Date = Date(), addresses: [PeerAddress] = [], lastKnownAddresses: [PeerAddress] = []) {
        self.deviceID = deviceID
        self.addresses = addresses
        self.lastKnownAddresses = lastKnownAddresses
        self.name = name
        self.advertisingKey = advertisingKey
        self.publicKey = publicKey
        self.pairedAt = Date(timeIntervalSince1970: pairedAt.timeIntervalSince1970.rounded(.down))
    }
}

/// The devices this one is paired with, and the key it seals its own advertisements with.
///
/// A value: change it with ``add(_:)``, ``remove(_:)`` and ``updateAdvertisingKey(_:for:)``, then
/// ``save(directory:)``. Stored as `trust.json` (mode 0600) in the agent's state directory:
///
/// ```json
/// {"version": 1, "advertisingKey": "<base64>",
///  "devices": [{"deviceID": "P56IOI7-…", "name": "laptop", "advertisingKey": "<base64>",
///               "publicKey": "<base64 of the X9.63 P-256 key>", "pairedAt": "2025-05-01T12:00:00Z",
///               "addresses": ["laptop.lan:52123", "[fe80::1%eth0]:52123"],
///               "lastKnown": ["192.168.1.20:52123"]}]}
/// ```
///
/// `publicKey`, `addresses` and `lastKnown` are optional (files written before they existed are read as they are).
public struct TrustStore: Sendable, Hashable {
    /// The file name of the store in its directory.
    public static let fileName = "trust.json"
    /// The version of the file format this build reads and writes.
    public static let formatVersion = 1

    /// The key this device seals its advertisements with; paired devices hold a copy.
    public var ownAdvertisingKey: AdvertisingKey
    /// The paired devices, sorted by name, then by ID.
    public private(set) var devices: [PairedDevice]

    /// A store with no paired devices.
    public init(ownAdvertisingKey: AdvertisingKey = .random(), devices: [PairedDevice] = []) {
        self.ownAdvertisingKey = ownAdvertisingKey
        self.devices = []
        for device in devices { add(device) }
    }

    /// The paired device with this ID, if any.
    public func device(_ id: DeviceID) -> PairedDevice? {
        devices.first { $0.deviceID == id }
    }

    /// Whether the device with this ID is paired.
    public func isPaired(_ id: DeviceID) -> Bool {
        device(id) != nil
    }

    /// Adds a paired device, or replaces the entry with the same ID. A replacement without an
    /// advertising key or public key keeps the key already known, and keeps the addresses known
    /// (new ones are added after them).
    public mutating func add(_ device: PairedDevice) {
        var device = device
        if let index = devices.firstIndex(where: { $0.deviceID == device.deviceID }) {
            if device.advertisingKey == nil { device.advertisingKey = devices[index].advertisingKey }
            if device.publicKey == nil { device.publicKey = devices[index].publicKey }
            if device.lastKnownAddresses.isEmpty { device.lastKnownAddresses = devices[index].lastKnownAddresses }
            // Addresses add up: the ones known stay, new ones follow.
            device.addresses = devices[index].addresses + device.addresses.filter { !devices[index].addresses.contains($0) }
            devices.remove(at: index)
        }
        let index = devices.firstIndex { Self.precedes(device, $0) } ?? devices.endIndex
        devices.insert(device, at: index)
    }

    /// Unpairs a device and rotates ``ownAdvertisingKey`` to a fresh random key, so the device
    /// can no longer read this one's advertisements. Returns the removed entry (nil, and no
    /// rotation, when the device was not paired).
    @discardableResult
    public mutating func remove(_ id: DeviceID) -> PairedDevice? {
        guard let index = devices.firstIndex(where: { $0.deviceID == id }) else { return nil }
        ownAdvertisingKey = .random()
        return devices.remove(at: index)
    }

    /// Replaces ``ownAdvertisingKey`` with a fresh random key: whoever held the old one can no
    /// longer read this device's advertisements. The paired devices learn the new key through the
    /// authenticated key exchange when they next see an advertisement they cannot open.
    public mutating func rotateAdvertisingKey() {
        ownAdvertisingKey = .random()
    }

    /// Records the advertising key a paired device now uses. Returns whether anything changed:
    /// false when the device is not paired or the key is the one already known.
    ///
    /// - Throws: ``TrustStoreError`` when the key is this device's own or another paired device's
    ///   (``checkAdvertisingKey(_:for:)``): a device that claims another's key wants its own
    ///   records taken for the other's, or the other's for its own.
    @discardableResult
    public mutating func updateAdvertisingKey(_ key: AdvertisingKey, for id: DeviceID) throws(TrustStoreError) -> Bool {
        guard let index = devices.firstIndex(where: { $0.deviceID == id }),
            devices[index].advertisingKey != key
        else { return false }
        try checkAdvertisingKey(key, for: id)
        devices[index].advertisingKey = key
        return true
    }

    /// Checks that device `id` may use `key`: it is neither this device's own key nor the key of
    /// another paired device.
    ///
    /// - Throws: ``TrustStoreError`` naming the device that holds the key.
    public func checkAdvertisingKey(_ key: AdvertisingKey, for id: DeviceID) throws(TrustStoreError) {
        if key == ownAdvertisingKey {
            throw TrustStoreError("device \(id.shortID) claims this device's own advertising key; refused (it is not its key)")
        }
        if let holder = devices.first(where: { $0.deviceID != id && $0.advertisingKey == key }) {
            throw TrustStoreError("device \(id.shortID) claims the advertising key of \(holder.name) (\(holder.deviceID.shortID)); refused (each device has its own key)")
        }
    }

    /// Records the public key of a paired device, learnt from its certificate. Returns whether
    /// anything changed: false when the device is not paired or the key is already known.
    @discardableResult
    public mutating func updatePublicKey(_ key: DevicePublicKey, for id: DeviceID) -> Bool {
        guard let index = devices.firstIndex(where: { $0.deviceID == id }),
            devices[index].publicKey != key
        else { return false }
        devices[index].publicKey = key
        return true
    }

    /// The most addresses kept per device in ``PairedDevice/lastKnownAddresses``.
    public static let lastKnownLimit = 4

    /// Records where a paired device was found now (each address with its port; the first
    /// ``lastKnownLimit`` are kept). Returns whether anything changed: false when the device is not
    /// paired or the addresses are the ones already known.
    @discardableResult
    public mutating func rememberAddresses(_ addresses: [PeerAddress], for id: DeviceID) -> Bool {
        let kept = Array(addresses.filter { $0.port != nil }.prefix(Self.lastKnownLimit))
        guard !kept.isEmpty, let index = devices.firstIndex(where: { $0.deviceID == id }),
            devices[index].lastKnownAddresses != kept
        else { return false }
        devices[index].lastKnownAddresses = kept
        return true
    }

    private static func precedes(_ a: PairedDevice, _ b: PairedDevice) -> Bool {
        a.name != b.name ? a.name < b.name : a.deviceID < b.deviceID
    }

    // MARK: Persistence

    /// Reads `trust.json` in `directory`. When the file does not exist, makes a new store with a
    /// random advertising key and saves it at once (creating `directory`, mode 0700, if needed).
    ///
    /// - Throws: ``TrustStoreError`` naming the file and saying how to recover when it cannot be
    ///   read or is corrupt. No entry is ever dropped silently.
    public static func load(directory: String) throws(TrustStoreError) -> TrustStore {
        try PrivateFiles.createDirectory(directory)  // and check it is this user's, mode 0700
        let path = PrivateFiles.join(directory, fileName)
        guard let bytes = try PrivateFiles.contents(path) else {
            let store = TrustStore()
            try store.save(directory: directory)
            return store
        }
        return try decode(bytes, path: path)
    }

    /// Writes `trust.json` in `directory` atomically: a new file of mode 0600, synced to disk,
    /// then renamed over the old one. Creates `directory` (mode 0700) if needed.
    ///
    /// - Throws: ``TrustStoreError`` naming the file when it cannot be written.
    public func save(directory: String) throws(TrustStoreError) {
        try PrivateFiles.createDirectory(directory)
        try PrivateFiles.writeAtomically(encoded(), to: PrivateFiles.join(directory, Self.fileName))
    }

    private struct File: Codable {
        var version: Int
        var advertisingKey: String
        var devices: [Entry]
    }

    private struct Entry: Codable {
        var deviceID: String
        var name: String
        var advertisingKey: String?
        var publicKey: String?
        var pairedAt: String
        var addresses: [String]?
        var lastKnown: [String]?
    }

    /// The JSON form, pretty-printed with sorted keys.
    func encoded() -> [UInt8] {
        let file = File(
            version: Self.formatVersion,
            advertisingKey: ownAdvertisingKey.base64,
            devices: devices.map {
                Entry(
                    deviceID: $0.deviceID.description,
                    name: $0.name,
                    advertisingKey: $0.advertisingKey?.base64,
                    publicKey: $0.publicKey?.base64,
                    pairedAt: $0.pairedAt.formatted(.iso8601),
                    addresses: $0.addresses.isEmpty ? nil : $0.addresses.map(\.description),
                    lastKnown: $0.lastKnownAddresses.isEmpty ? nil : $0.lastKnownAddresses.map(\.description)
                )
            }
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings and integers cannot fail.
        return ((try? encoder.encode(file)).map(Array.init) ?? []) + [UInt8(ascii: "\n")]
    }

    static func decode(_ bytes: [UInt8], path: String) throws(TrustStoreError) -> TrustStore {
        let recover = "remove it (or restore a backup) and pair your devices again"
        func corrupt(_ why: String) -> TrustStoreError {
            TrustStoreError("trust store \(path) is corrupt (\(why)): \(recover)")
        }
        // Read the version first, so a newer file is reported as such rather than as corrupt.
        struct Versioned: Decodable { var version: Int }
        guard let versioned = try? JSONDecoder().decode(Versioned.self, from: Data(bytes)) else {
            throw corrupt("not JSON with a \"version\" number")
        }
        guard versioned.version == formatVersion else {
            throw TrustStoreError(
                "trust store \(path) has format version \(versioned.version), but this handoff reads version \(formatVersion): use the handoff that wrote it, or remove the file and pair your devices again"
            )
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(bytes))
        } catch {
            throw corrupt(describe(error))
        }
        let ownKey: AdvertisingKey
        do {
            ownKey = try AdvertisingKey(base64: file.advertisingKey)
        } catch {
            throw corrupt("advertisingKey: \(error.message)")
        }
        var store = TrustStore(ownAdvertisingKey: ownKey)
        for (index, entry) in file.devices.enumerated() {
            let what = "device \(index + 1) (\"\(entry.name)\")"
            let id: DeviceID
            do {
                id = try DeviceID(parsing: entry.deviceID)
            } catch {
                throw corrupt("\(what): \(error)")
            }
            var key: AdvertisingKey?
            if let text = entry.advertisingKey {
                do {
                    key = try AdvertisingKey(base64: text)
                } catch {
                    throw corrupt("\(what): \(error.message)")
                }
            }
            var publicKey: DevicePublicKey?
            if let text = entry.publicKey {
                do {
                    publicKey = try DevicePublicKey(base64: text)
                } catch {
                    throw corrupt("\(what): \(error.message)")
                }
            }
            guard let pairedAt = try? Date(entry.pairedAt, strategy: .iso8601) else {
                throw corrupt("\(what): pairedAt \"\(entry.pairedAt)\" is not an ISO 8601 date")
            }
            var addresses: [PeerAddress] = []
            for text in entry.addresses ?? [] {
                do { addresses.append(try PeerAddress(parsing: text)) } catch { throw corrupt("\(what): \(error)") }
            }
            var lastKnown: [PeerAddress] = []
            for text in entry.lastKnown ?? [] {
                do { lastKnown.append(try PeerAddress(parsing: text)) } catch { throw corrupt("\(what): \(error)") }
            }
            guard !store.isPaired(id) else { throw corrupt("\(what): device \(id) is listed twice") }
            store.add(PairedDevice(deviceID: id, name: entry.name, advertisingKey: key, publicKey: publicKey, pairedAt: pairedAt,
                                   addresses: addresses, lastKnownAddresses: lastKnown))
        }
        return store
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        let parts: [String] = keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }
        let joined = parts.joined()
        return joined.hasPrefix(".") ? String(joined.dropFirst()) : joined
    }
}
