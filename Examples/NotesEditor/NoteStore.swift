import Foundation

/// The app's own notes, one JSON file per note (`<directory>/<id>.json`: `{"title", "text"}`), so
/// a link that carries only a note's persistentIdentifier can open it long after the activity
/// is gone.
struct NoteStore {
    struct Note: Codable, Equatable {
        var title: String
        var text: String
    }

    let directory: String

    /// `--store`, else `$XDG_DATA_HOME/notes-example`, else `~/.local/share/notes-example`.
    init(directory: String?) {
        let environment = ProcessInfo.processInfo.environment
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.local/share"
        self.directory = directory ?? data + "/notes-example"
    }

    /// Whether `id` can name a note: letters, digits, `.`, `_` and `-`, not starting with `.`.
    /// A link's identifier is anyone's text; it never reaches outside the store.
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && !id.hasPrefix(".")
            && id.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) }
    }

    func save(_ note: Note, id: String) throws {
        guard Self.isValidID(id) else { throw CocoaError(.fileWriteInvalidFileName) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try JSONEncoder().encode(note).write(to: URL(fileURLWithPath: "\(directory)/\(id).json"), options: .atomic)
    }

    /// The note with this ID, or nil when the store has none (or the ID cannot name one).
    func note(id: String) -> Note? {
        guard Self.isValidID(id), let data = FileManager.default.contents(atPath: "\(directory)/\(id).json") else { return nil }
        return try? JSONDecoder().decode(Note.self, from: data)
    }
}
