import CLibFuzzer
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

/// Whether `back`, read from the JSON form of `original`, represents it faithfully: equal, except
/// that dates may differ by the JSON form's rounding to the millisecond and NaNs (doubles and
/// dates) may differ in payload. Equal infinite dates match too (their difference is NaN).
///
/// The millisecond allows half a millisecond plus a few units in the last place of the date's
/// magnitude: a date exactly half a millisecond from the nearest millisecond (`.0625` s in year 601,
/// Fuzz/Crashes/FuzzUserInfoDecoder/userinfo-date-year-601-half-millisecond.bin) is written rounded
/// away from it, and the double read back is the nearest one to the written millisecond, 0.5 ms
/// plus up to a few ulps away (an ulp is 7.6 µs in year 601, 30 µs near year 9999); a flat
/// 0.000501 s refused it. Dates outside ISO 8601's years are written as seconds since 1970, whose
/// conversion from the wire's seconds since 2001 may round by an ulp.
public func faithfulJSONRoundTrip(_ original: PropertyListValue, _ back: PropertyListValue) -> Bool {
    switch (original, back) {
    case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
    case (.date(let a), .date(let b)):
        let x = a.timeIntervalSince1970, y = b.timeIntervalSince1970
        return x == y || (x.isNaN && y.isNaN) || abs(x - y) <= 0.000_5 + 4 * max(x.magnitude, y.magnitude).ulp
    case (.url(let a), .url(let b)): return a.absoluteString == b.absoluteString
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy(faithfulJSONRoundTrip)
    case (.dictionary(let a), .dictionary(let b)):
        return a.count == b.count && a.allSatisfy { key, value in b[key].map { faithfulJSONRoundTrip(value, $0) } ?? false }
    default: return original.isIdentical(to: back)
    }
}
