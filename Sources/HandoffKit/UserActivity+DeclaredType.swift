import HandoffCore

extension UserActivity {
    /// NSUserActivity's `init()`, deprecated in Apple's API: an activity of the first type the
    /// app's manifest declares (Apple takes the first of `NSUserActivityTypes` in Info.plist).
    /// Prefer ``init(activityType:application:)``, which names the type.
    /// - Parameter application: the application whose manifest gives the type; by default the
    ///   one running in this process.
    /// - Throws: 4609 when no application is given or running; 4608 when its manifest declares
    ///   no activity type.
    public convenience init(application: HandoffApplication? = nil) throws(HandoffError) {
        let app: HandoffApplication
        if let application { app = application } else { app = try HandoffApplication.running() }
        guard let first = app.manifest.activityTypes.first else {
            throw .handoffFailed(
                "the app \(app.manifest.identity.bundleID) declares no activity type, so UserActivity() has none to take; "
                    + "add one to activityTypes in its AppManifest, or name it: UserActivity(activityType:)")
        }
        self.init(activityType: first.rawValue, application: app)
    }
}
