/// What a partial copy of a sent file is kept under, for a later send to resume from: the sending
/// device, the file's path in the send, its size and its SHA-256. A send of the same file from the
/// same device finds it; any other file, even of the same name, does not.
public enum PartialFileKey {
    /// The key's text (the receiver names the partial file by its hash); nil for a file that
    /// cannot resume (standard input: no size or hash up front).
    public static func text(device: String, file: OfferedFile) -> String? {
        guard let size = file.size, let sha256 = file.sha256 else { return nil }
        // Lengths first, so that no two different keys run together into one text.
        return "\(device.utf8.count):\(device)\n\(file.path.utf8.count):\(file.path)\n\(size)\n\(sha256)"
    }
}
