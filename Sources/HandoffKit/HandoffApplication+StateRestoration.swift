import HandoffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension HandoffApplication {
    /// Registers an object whose state is preserved in the nested coder at `identifierPath`
    /// (``StateRestoring``). Register objects before ``run()`` starts (or in
    /// ``HandoffApplicationDelegate/willFinishLaunching(options:)``) to have them restored.
    public func registerStateRestoring(_ object: any StateRestoring, identifierPath: [String]) {
        stateRestorables[identifierPath] = object
    }

    /// Saves the app's state now, if the delegate's ``HandoffApplicationDelegate/shouldSaveApplicationState(coder:)``
    /// agrees: willEncodeRestorableState, then each registered object into its nested coder, then
    /// the file (mode 0600, replaced atomically). ``run()`` does this when it ends. Returns whether
    /// state was saved.
    @discardableResult
    public func saveApplicationState() async throws(HandoffError) -> Bool {
        let root = RestorationCoder()
        guard await delegate.shouldSaveApplicationState(coder: root) else { return false }
        await delegate.willEncodeRestorableState(with: root)
        for (path, object) in stateRestorables.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            await object.encodeRestorableState(with: root.nestedCoder(forIdentifierPath: path))
        }
        try stateFile.save(root)
        return true
    }

    /// Restores the state saved last time, if any and if the delegate's
    /// ``HandoffApplicationDelegate/shouldRestoreApplicationState(coder:)`` agrees: each object
    /// in the archive decodes from its nested coder (parents first), then didDecodeRestorableState.
    /// A file that cannot be read is moved aside and the app starts fresh.
    func restoreApplicationState() async {
        let root: RestorationCoder
        switch stateFile.load() {
        case .none:
            return
        case .unreadable(let reason, let movedTo):
            let aside = movedTo.map { "moved it to \($0)" } ?? "could not move it aside"
            Self.report("handoffkit: \(manifest.identity.bundleID): ignoring the saved application state in \(stateFile.path) (\(reason)); \(aside) and starting fresh")
            return
        case .state(let coder):
            root = coder
        }
        guard await delegate.shouldRestoreApplicationState(coder: root) else { return }
        for path in root.nestedIdentifierPaths {
            let coder = root.nestedCoder(forIdentifierPath: path)
            if let object = await delegate.restorationObject(forIdentifierPath: path, coder: coder) ?? stateRestorables[path] {
                await object.decodeRestorableState(with: coder)
            }
        }
        await delegate.didDecodeRestorableState(with: root)
    }

    /// A line on standard error: the library has no logger of its own.
    static func report(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
