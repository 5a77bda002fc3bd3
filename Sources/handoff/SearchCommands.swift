import ArgumentParser
import HandoffCore

import Foundation

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find saved activities (published with --searchable, or by apps with isEligibleForSearch).",
        discussion: """
            Every word must match the start of a word in the title, the keywords, the text of \
            contentAttributeSet or webpageURL; case and accents do not matter. Results are ranked best \
            first. --devices all also asks every reachable paired device; one that does not answer is \
            named on standard error and the others' results still print.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The words to look for.") var words: [String]
    @Option(name: .long, help: ArgumentHelp("Where to look: local (this device) or all (and every reachable paired device).", valueName: "local|all"))
    var devices: String = "local"
    @Option(name: .long, help: ArgumentHelp("The most results to print (1 to \(ControlRequest.maximumSearchLimit)).", valueName: "n"))
    var limit: Int = 20

    func validate() throws {
        guard ControlRequest.SearchScope(rawValue: devices) != nil else { throw ValidationError("--devices must be local or all, not \(devices)") }
        guard (1...ControlRequest.maximumSearchLimit).contains(limit) else { throw ValidationError("--limit must be from 1 to \(ControlRequest.maximumSearchLimit)") }
        guard !words.joined().trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("give one or more words to look for") }
    }

    func run() async throws {
        let request = ControlRequest.search(query: words.joined(separator: " "), devices: ControlRequest.SearchScope(rawValue: devices)!, limit: limit)
        guard let found = try await options.call(request, as: SearchResult.self) else { return }
        for (device, why) in found.unreachable.sorted(by: { $0.key < $1.key }) {
            FileHandle.standardError.write(Data("handoff: \(UntrustedText.escaped(device)) did not answer: \(UntrustedText.escaped(why))\n".utf8))
        }
        if found.results.isEmpty { say("nothing saved matches") }
        for result in found.results {
            let id = result.persistentIdentifier.map { "  [\($0)]" } ?? ""
            say("\(result.title ?? "untitled")  \(result.activityType)  on \(result.device)\(id)")
            if let url = result.webpageURL { say("    \(url.absoluteString)") }
        }
    }
}

struct Saved: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage the activities saved for search on this device.",
        subcommands: [Delete.self])

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete saved activities by persistent identifier, or all of them.",
            discussion: "Deletes what any app or `handoff publish` saved on this device; the activities still published stay published.")
        @OptionGroup var options: GlobalOptions
        @Option(name: .customLong("persistent-id"), parsing: .upToNextOption,
                help: ArgumentHelp("The persistent identifiers to delete.", valueName: "id"))
        var persistentIDs: [String] = []
        @Flag(name: .long, help: "Delete every saved activity.")
        var all = false

        func validate() throws {
            guard all != !persistentIDs.isEmpty else { throw ValidationError("give --persistent-id ID... or --all (one of them)") }
            guard !persistentIDs.contains(where: \.isEmpty) else { throw ValidationError("--persistent-id may not be empty") }
        }

        func run() async throws {
            let which: ControlRequest.SavedSelection = all ? .all : .persistentIdentifiers(persistentIDs)
            guard let result = try await options.call(.deleteSaved(which), as: DeleteSavedResult.self, prettyJSON: false) else { return }
            say("deleted \(result.deleted) saved activit\(result.deleted == 1 ? "y" : "ies")")
        }
    }
}
