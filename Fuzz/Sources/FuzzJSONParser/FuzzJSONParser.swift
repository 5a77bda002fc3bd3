// Fuzzes the strict JSON parser behind the control socket, `handoff --user-info` and the
// configuration file, and the two readers of its output that matter most: the JSON form of
// userInfo and of an activity (what `publish` sends and a handler reads).
//
// Invariants when JSONValue(parsing:) succeeds:
//   - `serialized` re-parses to an equal value, and serializing that gives the same text;
//   - `prettySerialized` re-parses to an equal value;
//   - if the value reads as a userInfo (UserInfo(userInfoJSON:)), its JSON form can be produced
//     and reads back as the same userInfo (dates to the millisecond), and after that one round
//     the JSON form is stable (the first round may round dates);
//   - likewise for an activity (Activity(json:)), as the agent reads `publish` and writes it to a
//     handler.

import FuzzSupport
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

private let target = "FuzzJSONParser"
private let fixedID = UUID(uuid: (0x8C, 0x1D, 0x3F, 0x0A, 0x2B, 0x6E, 0x4F, 0x55, 0x9B, 0x62, 0x3C, 0x1A, 0x2D, 0x4E, 0x5F, 0x60))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let value: JSONValue
    do { value = try JSONValue(parsing: input) } catch { return 0 }

    let text = value.serialized
    do {
        let again = try JSONValue(parsing: text)
        require(again == value, target, "serialized \(text.debugDescription) re-parses to a different value")
        require(again.serialized == text, target, "serialization not stable: \(text.debugDescription) then \(again.serialized.debugDescription)")
    } catch {
        invariantFailed(target, "serialized \(text.debugDescription) does not parse: \(error)")
    }
    let pretty = value.prettySerialized
    do {
        let again = try JSONValue(parsing: pretty)
        require(again == value, target, "prettySerialized \(pretty.debugDescription) re-parses to a different value")
    } catch {
        invariantFailed(target, "prettySerialized \(pretty.debugDescription) does not parse: \(error)")
    }

    guard case .object = value else { return 0 }

    if let userInfo = try? UserInfo(userInfoJSON: value) {
        let json = userInfo.userInfoJSON
        do {
            let back = try UserInfo(userInfoJSON: json)
            require(faithfulJSONRoundTrip(.dictionary(userInfo), .dictionary(back)), target,
                    "userInfo JSON form \(json.serialized.debugDescription) reads back as \(back), not \(userInfo)")
            let stable = back.userInfoJSON
            require(stable == json, target, "userInfo JSON form not stable: \(json.serialized.debugDescription) then \(stable.serialized.debugDescription)")
        } catch {
            invariantFailed(target, "userInfo JSON form \(json.serialized.debugDescription) does not read back: \(error)")
        }
    }

    if let activity = try? Activity(json: value, defaultID: fixedID) {
        let json = activity.json
        do {
            let back = try Activity(json: json)
            let stable = back.json
            require(stable == json, target, "activity JSON form not stable: \(json.serialized.debugDescription) then \(stable.serialized.debugDescription)")
        } catch {
            invariantFailed(target, "activity JSON form \(json.serialized.debugDescription) does not read back: \(error)")
        }
    }
    return 0
}
