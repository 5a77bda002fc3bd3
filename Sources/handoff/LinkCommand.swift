import ArgumentParser
import HandoffCore

import Foundation

struct Link: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a lasting link to an activity's content (Quick Note style).",
        discussion: """
            The link (\(HandoffLink.prefix)...) carries the activity's type, persistentIdentifier, \
            targetContentIdentifier, webpageURL and title, and never its userInfo. It does not expire and \
            depends on no activity, agent run or device: `handoff continue LINK` on any host gives the content \
            to the app there that declares the type, else opens the webpageURL. ID is an activity this host \
            holds (its ID or a unique prefix of at least 4 characters, as `handoff status` shows it); \
            --persistent-id names one held or saved here for search instead. To link a paired device's \
            activity, run `handoff link` on that device.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("A held activity's ID or unique prefix, as `handoff status` shows it.", valueName: "id"))
    var id: String?
    @Option(name: .customLong("persistent-id"), help: ArgumentHelp("Link the activity held or saved here with this persistent identifier.", valueName: "id"))
    var persistentID: String?

    func validate() throws {
        switch (id, persistentID) {
        case (let id?, nil) where !id.isEmpty: break
        case (nil, let persistentID?) where !persistentID.isEmpty: break
        default: throw ValidationError("give an activity's ID (as `handoff status` shows it) or --persistent-id ID, one of them")
        }
    }

    func run() async throws {
        let source: ControlRequest.LinkSource = if let id { .held(id) } else { .saved(persistentIdentifier: persistentID!) }
        guard let result = try await options.call(.link(source), as: LinkResult.self) else { return }
        // Printed alone on its line, for scripts; the text is percent-encoded ASCII.
        print(result.link)
    }
}
