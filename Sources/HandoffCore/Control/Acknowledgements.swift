#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `publish`: the activity now current.
public struct PublishResult: ControlResult, Equatable {
    /// The activity's ID (the app's, or one made up); nil only in an answer that lacks it.
    public var id: UUID?

    public init(id: UUID?) { self.id = id }

    public var json: JSONValue { .object(["id": id.map { .string($0.uuidString) } ?? .null]) }

    public init(json: JSONValue) { self.init(id: json.uuid("id")) }
}

/// `resign`: the activity withdrawn.
public struct ResignResult: ControlResult, Equatable {
    /// The activity's ID; nil only in an answer that lacks it.
    public var resigned: UUID?

    public init(resigned: UUID?) { self.resigned = resigned }

    public var json: JSONValue { .object(["resigned": resigned.map { .string($0.uuidString) } ?? .null]) }

    public init(json: JSONValue) { self.init(resigned: json.uuid("resigned")) }
}

/// `registerApp`: the app this connection now is, and why the agent started it (`launchOptions`,
/// present only when it did so for a continuation or an open).
public struct RegisterAppResult: ControlResult, Equatable {
    /// The app's bundle ID.
    public var registered: String
    /// Why the agent started the app; ``LaunchOptions/none`` when it did not.
    public var launchOptions: LaunchOptions

    public init(registered: String, launchOptions: LaunchOptions = .none) {
        self.registered = registered
        self.launchOptions = launchOptions
    }

    public var json: JSONValue {
        var body: [String: JSONValue] = ["registered": .string(registered)]
        if launchOptions.hasReason { body["launchOptions"] = launchOptions.json }
        return .object(body)
    }

    public init(json: JSONValue) {
        self.init(registered: json.text("registered"), launchOptions: json["launchOptions"].map(LaunchOptions.init(json:)) ?? .none)
    }
}

/// `openStreams`: the continuation streams are joined; the app's stream data follows on the
/// connection.
public struct OpenStreamsResult: ControlResult, Equatable {
    /// The ID the source agent knows the stream pair by; nil only in an answer that lacks it.
    public var streamID: UUID?

    public init(streamID: UUID?) { self.streamID = streamID }

    public var json: JSONValue { .object(["streamID": streamID.map { .string($0.uuidString) } ?? .null]) }

    public init(json: JSONValue) { self.init(streamID: json.uuid("streamID")) }
}

/// The answer of a request that succeeds with nothing to say (`reply`, `acceptStreams`): `{}`.
public struct EmptyResult: ControlResult, Equatable {
    public init() {}

    public var json: JSONValue { .object([:]) }

    public init(json: JSONValue) {}
}

/// The answer of `pause` and `resume`: whether handoff is paused now, and whether the request
/// changed that.
public struct PauseResult: ControlResult, Equatable {
    public var paused: Bool
    /// False when it already was so.
    public var changed: Bool

    public init(paused: Bool, changed: Bool) {
        (self.paused, self.changed) = (paused, changed)
    }

    public var json: JSONValue { .object(["paused": .bool(paused), "changed": .bool(changed)]) }

    public init(json: JSONValue) {
        self.init(paused: json["paused"]?.boolValue ?? false, changed: json["changed"]?.boolValue ?? false)
    }
}

/// The answer of `watch`, before the events: `{"watching": true}`.
public struct WatchResult: ControlResult, Equatable {
    public init() {}

    public var json: JSONValue { .object(["watching": .bool(true)]) }

    public init(json: JSONValue) {}
}
