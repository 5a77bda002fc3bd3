import Foundation

extension LabDriver {
    /// Hands a step to a lab script that takes its orders as files (scripts/lab-browser-*.py):
    /// writes `step` as `directory/step-N.json` (atomically, by a rename) and waits for the
    /// script's `directory/answer-N.json`; returns it parsed.
    func exchangeStep(_ directory: String, _ number: Int, _ step: Any, timeout: TimeInterval = 10) throws -> Any {
        let file = "\(directory)/step-\(number).json"
        try JSONSerialization.data(withJSONObject: step).write(to: URL(fileURLWithPath: file + ".tmp"))
        try FileManager.default.moveItem(atPath: file + ".tmp", toPath: file)
        let answer = "\(directory)/answer-\(number).json"
        try waitUntil("the answer to step \(number) in \(directory)", timeout: timeout) { FileManager.default.fileExists(atPath: answer) }
        return try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: answer)))
    }
}
