// Fuzzes the binary property-list decoder: the payload of every peer frame, and the userInfo a
// continuing agent receives from the source.
//
// Invariants when decoding succeeds:
//   - decode(encode(v)) succeeds and is identical (isIdentical(to:): doubles and dates by bit
//     pattern) to v, and encode is stable: encode(decode(encode(v))) == encode(v);
//   - decodeUserInfo agrees with decode on whether the value is a dictionary;
//   - the value's JSON form (what a handler reads on standard input) can be produced, and reads
//     back (PropertyListValue(json:)) as the same value, dates to the millisecond.

import FuzzSupport
import HandoffCore

private let target = "FuzzUserInfoDecoder"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUserInfoDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let value: PropertyListValue
    do { value = try PropertyListBinaryCoding.decode(input) } catch {
        // Nothing decodes as a userInfo what does not decode as a value.
        require((try? PropertyListBinaryCoding.decodeUserInfo(input)) == nil, target, "decodeUserInfo accepts what decode refuses")
        return 0
    }

    let encoded = PropertyListBinaryCoding.encode(value)
    let again: PropertyListValue
    do { again = try PropertyListBinaryCoding.decode(encoded) } catch {
        invariantFailed(target, "encode(v) does not decode: \(error); encoding \(hex(encoded))")
    }
    require(again.isIdentical(to: value), target, "decode(encode(v)) differs from v: \(value) vs \(again)")
    let reencoded = PropertyListBinaryCoding.encode(again)
    require(reencoded == encoded, target, "encoding not stable: \(hex(encoded)) then \(hex(reencoded))")

    let userInfo = try? PropertyListBinaryCoding.decodeUserInfo(input)
    if case .dictionary(let members) = value {
        require(userInfo.map { PropertyListValue.dictionary($0).isIdentical(to: .dictionary(members)) } ?? false, target,
                "decodeUserInfo disagrees with decode on a dictionary")
    } else {
        require(userInfo == nil, target, "decodeUserInfo accepts a \(value.typeName)")
    }

    // The JSON form, as a handler reads it (ActivityDispatcher) and `continue` returns it: it can
    // be produced, it parses, and it reads back as the same value (dates to the millisecond).
    let text = value.json.serialized
    do {
        let back = try PropertyListValue(json: try JSONValue(parsing: text))
        require(faithfulJSONRoundTrip(value, back), target, "JSON form \(text.debugDescription) reads back as \(back), not \(value)")
    } catch {
        invariantFailed(target, "JSON form \(text.debugDescription) does not read back: \(error)")
    }
    return 0
}
