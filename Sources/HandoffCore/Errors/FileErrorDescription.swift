#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sentence that says why a file operation failed, as Foundation's `localizedDescription`
/// says it on Linux, for the errors FoundationEssentials' file APIs throw (`Data(contentsOf:)`,
/// `FileManager`): "The operation could not be completed. The file doesn’t exist."
///
/// `localizedDescription` is in Foundation only, which links ICU; this keeps the same text, byte
/// for byte, in modules that import FoundationEssentials alone.
public func fileErrorDescription(_ error: any Error) -> String {
    let prefix = "The operation could not be completed."
    guard let error = error as? CocoaError else { return "\(prefix) (\(error))" }
    if let reason = fileErrorReasons[error.code.rawValue] { return "\(prefix) \(reason)" }
    return "\(prefix) (NSCocoaErrorDomain error \(error.code.rawValue).)"
}

/// Foundation's failure reasons for the file-system codes of `CocoaError`, by code.
private let fileErrorReasons: [Int: String] = [
    CocoaError.Code.fileNoSuchFile.rawValue: "The file doesn’t exist.",
    CocoaError.Code.fileLocking.rawValue: "The file couldn’t be locked.",
    CocoaError.Code.fileReadNoPermission.rawValue: "You don’t have permission.",
    CocoaError.Code.fileReadInvalidFileName.rawValue: "The file name is invalid.",
    CocoaError.Code.fileReadCorruptFile.rawValue: "The file isn’t in the correct format.",
    CocoaError.Code.fileReadNoSuchFile.rawValue: "The file doesn’t exist.",
    CocoaError.Code.fileReadInapplicableStringEncoding.rawValue: "The specified text encoding isn’t applicable.",
    CocoaError.Code.fileReadUnsupportedScheme.rawValue: "The specified URL type isn’t supported.",
    CocoaError.Code.fileReadTooLarge.rawValue: "The item is too large.",
    CocoaError.Code.fileReadUnknownStringEncoding.rawValue: "The text encoding of the contents couldn’t be determined.",
    CocoaError.Code.fileWriteNoPermission.rawValue: "You don’t have permission.",
    CocoaError.Code.fileWriteInvalidFileName.rawValue: "The file name is invalid.",
    CocoaError.Code.fileWriteFileExists.rawValue: "A file with the same name already exists.",
    CocoaError.Code.fileWriteInapplicableStringEncoding.rawValue: "The specified text encoding isn’t applicable.",
    CocoaError.Code.fileWriteUnsupportedScheme.rawValue: "The specified URL type isn’t supported.",
    CocoaError.Code.fileWriteOutOfSpace.rawValue: "There isn’t enough space.",
    CocoaError.Code.fileWriteVolumeReadOnly.rawValue: "The volume is read only.",
]
