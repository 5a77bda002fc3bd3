import Configuration
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `wideArea.*`: wide-area DNS-SD (RFC 6763 §11) in a unicast DNS domain on an existing server
/// (docs/NETWORKS.md). The agent registers its service there by TSIG-signed dynamic update and
/// browses the domain besides `local.`. Off unless `wideArea.domain` is set.
public struct WideAreaConfiguration: Sendable, Equatable {
    /// `wideArea.domain`: the domain to register in and browse, e.g. `handoff.example.` (a zone
    /// of the server).
    public var domain: String
    /// `wideArea.server`: the server that takes the updates and answers the queries, `A.B.C.D[:PORT]`.
    public var server: String
    /// `wideArea.tsigKeyName`: the TSIG key's name, as the server knows it.
    public var tsigKeyName: String
    /// `wideArea.tsigAlgorithm`: only `hmac-sha256`.
    public var tsigAlgorithm: String
    /// `wideArea.tsigSecret`: the key's secret, base64 (as in BIND's `key` statement). A config
    /// that holds it should be readable by its owner only (mode 0600).
    public var tsigSecret: [UInt8]

    /// Reads `wideArea.*`; nil when `wideArea.domain` is not set.
    public init?(reader: ConfigReader) throws(ConfigurationError) {
        guard let domain = reader.string(forKey: "wideArea.domain") else { return nil }
        self.domain = domain.hasSuffix(".") ? domain : domain + "."
        server = reader.string(forKey: "wideArea.server", default: "")
        tsigKeyName = reader.string(forKey: "wideArea.tsigKeyName", default: "")
        tsigAlgorithm = reader.string(forKey: "wideArea.tsigAlgorithm", default: "hmac-sha256")
        let secret = reader.string(forKey: "wideArea.tsigSecret", default: "")
        guard domain.count > 1, !domain.hasPrefix("."), !domain.contains("..") else {
            throw ConfigurationError(key: "wideArea.domain", "must be a domain name, e.g. \"handoff.example.\"")
        }
        guard Self.isIPv4WithPort(server) else {
            throw ConfigurationError(key: "wideArea.server", "must be an IPv4 address with an optional port, e.g. \"192.0.2.53:53\"")
        }
        guard !tsigKeyName.isEmpty else { throw ConfigurationError(key: "wideArea.tsigKeyName", "must name the TSIG key the server accepts updates with") }
        guard tsigAlgorithm == "hmac-sha256" else { throw ConfigurationError(key: "wideArea.tsigAlgorithm", "must be hmac-sha256") }
        guard let bytes = Data(base64Encoded: secret), !bytes.isEmpty else {
            throw ConfigurationError(key: "wideArea.tsigSecret", "must be the key's secret in base64 (tsig-keygen prints it)")
        }
        tsigSecret = Array(bytes)
    }

    static func isIPv4WithPort(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts.count == 1 || UInt16(parts[1]).map { $0 > 0 } == true
    }
}
