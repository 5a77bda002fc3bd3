import CLibFuzzer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a line to standard error (unbuffered, safe from any context).
public func fuzzLog(_ message: String) {
    var line = message
    if !line.hasSuffix("\n") { line += "\n" }
    var utf8 = Array(line.utf8)
    var offset = 0
    while offset < utf8.count {
        let n = utf8.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { break }
        offset += n
    }
    utf8.removeAll()
}

/// Reports a broken invariant and traps, so libFuzzer treats the input as a crash and saves it
/// (`crash-<sha1>`). scripts/fuzz greps for "INVARIANT FAILED".
public func invariantFailed(_ target: String, _ what: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fuzzLog("==\(target)== INVARIANT FAILED: \(what)")
    fatalError("\(target): invariant failed: \(what)", file: file, line: line)
}

/// Checks an invariant; see ``invariantFailed(_:_:file:line:)``.
@inline(__always)
public func require(
    _ condition: @autoclosure () -> Bool, _ target: String, _ what: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() { invariantFailed(target, what(), file: file, line: line) }
}

/// Bytes as hex, shortened in the middle when long, for invariant messages.
public func hex(_ bytes: some Collection<UInt8>, limit: Int = 160) -> String {
    let digits = Array("0123456789abcdef")
    func render(_ s: some Sequence<UInt8>) -> String {
        var out = ""
        for b in s { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0xF)]) }
        return out
    }
    if bytes.count <= limit { return render(bytes) }
    return render(bytes.prefix(limit / 2)) + "…(\(bytes.count) bytes)…" + render(bytes.suffix(limit / 2))
}

/// The input libFuzzer passes, as an array.
public func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// The signature of `LLVMFuzzerTestOneInput`.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer with the command-line arguments and `target`; call it from main.swift as
/// `exit(runLibFuzzer(fuzzSomething))`.
public func runLibFuzzer(_ target: FuzzTarget) -> CInt {
    handoff_fuzz_run_driver(CommandLine.argc, CommandLine.unsafeArgv, target)
}
