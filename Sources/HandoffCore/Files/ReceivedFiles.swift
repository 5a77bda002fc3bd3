#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A send that arrived here (`filesReceived`, a `watch` event and a notification).
public struct ReceivedFiles: Sendable, Equatable {
    /// Identifies the send (and its notification).
    public var id: UUID
    /// The sending device, by the name this host stored when pairing.
    public var peer: String
    /// How many files were kept.
    public var files: Int
    /// Their total size.
    public var bytes: Int
    /// The download directory they are in.
    public var directory: String

    public init(id: UUID, peer: String, files: Int, bytes: Int, directory: String) {
        self.id = id
        self.peer = peer
        self.files = files
        self.bytes = bytes
        self.directory = directory
    }

    /// "3 files from h1, 1.2 GiB".
    public var summary: String {
        "\(files) file\(files == 1 ? "" : "s") from \(peer), \(ByteCount.text(bytes))"
    }
}
