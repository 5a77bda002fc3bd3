import HandoffCore

/// An object whose state is preserved when the app quits and restored when it starts again
/// (UIKit's UIStateRestoring / a view controller's restorable state).
///
/// Register it with ``HandoffApplication/registerStateRestoring(_:identifierPath:)``; its
/// restoration identifier path names its nested coder in the archive. At the next launch the
/// object for each path in the archive comes from the delegate's
/// ``HandoffApplicationDelegate/restorationObject(forIdentifierPath:coder:)``, else from the
/// object registered at that path by then.
public protocol StateRestoring: AnyObject, Sendable {
    /// Writes the object's state into its own nested coder.
    func encodeRestorableState(with coder: RestorationCoder) async
    /// Reads the object's state back from its nested coder. A key may be missing or hold
    /// another type (an older version of the app wrote it): its decode gives nil.
    func decodeRestorableState(with coder: RestorationCoder) async
}
