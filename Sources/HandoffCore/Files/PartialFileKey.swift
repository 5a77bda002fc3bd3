/// What a partial copy of a sent file is kept under, for a later send to resume from: the sending
/// device (as the receiver authenticated it), the file's path in the send, its size and the
/// sender's resume key for it (``OfferedFile/resumeKey``). A send of the same, unchanged file from
/// the same device finds it; any other file, even of the same name, does not.
public enum PartialFileKey {
    /// The key's text (the receiver names the partial file by its hash); nil for a file that
    /// cannot resume (standard input: no size or resume key up front).
    public static func text(device: String, file: OfferedFile) -> String? {
        guard let size = file.size, let resumeKey = file.resumeKey else { return nil }
        // Lengths first, so that no two different keys run together into one text.
        return "\(device.utf8.count):\(device)\n\(file.path.utf8.count):\(file.path)\n\(size)\n\(resumeKey)"
    }
}
