/// The receiver's answer to a ``FileOffer``, as a pure decision: take it, with the byte each
/// file starts from, or refuse the whole offer with an error that says why.
public struct FileOfferDecision: Sendable, Equatable {
    /// What the receiver allows (config `receive.*`).
    public struct Policy: Sendable, Equatable {
        /// `receive.enabled`.
        public var enabled: Bool
        /// `receive.maxBytes`: the most bytes one send may have.
        public var maxBytes: Int

        public init(enabled: Bool, maxBytes: Int) {
            self.enabled = enabled
            self.maxBytes = maxBytes
        }
    }

    /// Where each file goes, in offer order.
    public var paths: [ReceivedPath]
    /// The byte each file starts from: 0, or the length of a partial copy it resumes.
    public var starts: [Int]

    /// Decides on `offer` from `sender`.
    ///
    /// - Parameters:
    ///   - partialLengths: for each file, the length of a kept partial copy of it (same sender,
    ///     path, size and SHA-256), or nil. A partial copy longer than the file is not used.
    ///   - freeBytes: the free space in the download directory (statvfs), or nil when unknown.
    public static func decide(_ offer: FileOffer, from sender: String, receiver: String, policy: Policy,
                              partialLengths: [Int?], freeBytes: Int?) -> Result<FileOfferDecision, HandoffError> {
        guard policy.enabled else {
            return .failure(.connectionUnavailable("\(receiver) does not take files (config receive.enabled is false)"))
        }
        var paths: [ReceivedPath] = []
        for file in offer.files {
            guard let path = ReceivedPath(sanitizing: file.path) else {
                return .failure(.handoffFailed("\(receiver) refused the files: \"\(UntrustedText.escaped(file.path))\" cannot name a file (a NUL, more than \(ReceivedPath.maximumDepth) directories, or no name at all)"))
            }
            paths.append(path)
        }
        let total = offer.knownBytes
        guard total <= policy.maxBytes else {
            return .failure(.userInfoTooLarge("\(receiver) refused the files: they are \(ByteCount.text(total)), over its receive.maxBytes (\(ByteCount.text(policy.maxBytes)))"))
        }
        var starts: [Int] = []
        for (index, file) in offer.files.enumerated() {
            let partial = index < partialLengths.count ? partialLengths[index] : nil
            if let partial, let size = file.size, file.isResumable, partial > 0, partial <= size {
                starts.append(partial)
            } else {
                starts.append(0)
            }
        }
        let remaining = zip(offer.files, starts).reduce(0) { $0 + max(0, ($1.0.size ?? 0) - $1.1) }
        if let freeBytes, remaining > freeBytes {
            return .failure(.handoffFailed("\(receiver) refused the files: they need \(ByteCount.text(remaining)) and its download directory has \(ByteCount.text(freeBytes)) free; nothing was written"))
        }
        return .success(FileOfferDecision(paths: paths, starts: starts))
    }
}
