#if canImport(CDBus)
import CDBus

/// A client of the desktop's notification server, `org.freedesktop.Notifications` on the session
/// bus (the Desktop Notifications specification 1.2): GetCapabilities, GetServerInformation,
/// Notify and CloseNotification, and the signals ActionInvoked and NotificationClosed.
final class NotificationServer: Sendable {
    /// A signal from the server.
    enum Signal: Sendable, Equatable {
        /// The user invoked an action (`default` is a click on the notification).
        case actionInvoked(id: UInt32, key: String)
        /// The notification went: 1 expired, 2 dismissed by the user, 3 closed by
        /// CloseNotification, 4 undefined.
        case closed(id: UInt32, reason: UInt32)
        /// A notification server took the bus name (it started), or gave it up (it exited).
        case serverPresent(Bool)
    }

    static let name = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    /// How long a call may wait for the server's answer, in milliseconds.
    static let callTimeout: Int32 = 5000

    /// The server's signals; finishes when the session bus closes or is lost.
    let signals: AsyncStream<Signal>
    private let bus: SessionBus

    private init(bus: SessionBus, signals: AsyncStream<Signal>) {
        self.bus = bus
        self.signals = signals
    }

    /// The session bus's address (``SessionBus/address(environment:)``).
    static func sessionBusAddress(environment: [String: String]) -> String? {
        SessionBus.address(environment: environment)
    }

    /// Connects to the session bus at `address` and listens for the server's signals and for
    /// servers starting and exiting. Whether a server is there shows with the first call
    /// (``capabilities()``).
    static func connect(address: String) async throws(SessionBusError) -> NotificationServer {
        let (signals, continuation) = AsyncStream.makeStream(of: Signal.self)
        let rules = ["ActionInvoked", "NotificationClosed"].map {
            "type='signal',sender='\(name)',path='\(path)',interface='\(name)',member='\($0)'"
        } + ["type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"]
        let bus = try await SessionBus.open(address: address, matchRules: rules, onSignal: { message in
            if let signal = parse(message) { continuation.yield(signal) }
        }, onClose: { continuation.finish() })
        return NotificationServer(bus: bus, signals: signals)
    }

    /// `GetCapabilities`: what the server supports (`actions`, `body`, `body-markup`, ...).
    /// Fails when no server is on the bus.
    func capabilities() async throws(SessionBusError) -> [String] {
        try await call("GetCapabilities") { _ in } reply: { $0.strings() }
    }

    /// `GetServerInformation`'s name and version, as "dunst 1.9.0".
    func serverName() async throws(SessionBusError) -> String {
        try await call("GetServerInformation") { _ in } reply: { reader in
            guard let name = reader.string(), let _ = reader.string(), let version = reader.string() else { return nil }
            return "\(name) \(version)"
        }
    }

    /// `Notify`; returns the server's ID for the notification.
    /// - Parameters:
    ///   - replacing: the ID of a notification to replace in place, or 0.
    ///   - actions: key/label pairs, flat.
    ///   - expireTimeout: milliseconds; 0 never expires, -1 the server's default.
    func notify(appName: String, replacing: UInt32, summary: String, body: String, actions: [String],
                expireTimeout: Int32) async throws(SessionBusError) -> UInt32 {
        try await call("Notify") { writer in
            writer.append(appName)
            writer.append(replacing)
            writer.append("")  // app_icon
            writer.append(summary)
            writer.append(body)
            writer.append(actions)
            writer.appendEmptyDictionary()  // hints
            writer.append(expireTimeout)
        } reply: { $0.uint32() }
    }

    /// `CloseNotification`.
    func close(_ id: UInt32) async throws(SessionBusError) {
        try await call("CloseNotification") { $0.append(id) } reply: { _ in () }
    }

    /// Closes the bus connection; ``signals`` finishes.
    func disconnect() {
        bus.close()
    }

    /// Calls a method of the server and waits for its answer (on the bus thread).
    private func call<Value: Sendable>(_ method: String, arguments: @escaping @Sendable (inout DBusArgumentWriter) -> Void,
                                       reply: @escaping @Sendable (inout DBusArgumentReader) -> Value?) async throws(SessionBusError) -> Value {
        let result: Result<Value, SessionBusError> = await bus.perform { connection in
            guard let connection else { return .failure(SessionBusError("the session bus connection is closed")) }
            guard let message = dbus_message_new_method_call(Self.name, Self.path, Self.name, method) else {
                return .failure(SessionBusError("out of memory for a D-Bus message"))
            }
            defer { dbus_message_unref(message) }
            var writer = DBusArgumentWriter(message)
            arguments(&writer)
            guard writer.ok else { return .failure(SessionBusError("cannot write the arguments of \(method)")) }
            var error = DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard let answer = dbus_connection_send_with_reply_and_block(connection, message, Self.callTimeout, &error) else {
                return .failure(SessionBusError("\(Self.name).\(method): \(SessionBusError.text(error))"))
            }
            defer { dbus_message_unref(answer) }
            var reader = DBusArgumentReader(answer)
            guard let value = reply(&reader) else { return .failure(SessionBusError("\(Self.name).\(method) answered with unexpected arguments")) }
            return .success(value)
        }
        return try result.get()
    }

    /// Reads ActionInvoked, NotificationClosed and the bus's NameOwnerChanged for the server's
    /// name; nil for anything else.
    private static func parse(_ message: OpaquePointer) -> Signal? {
        var reader = DBusArgumentReader(message)
        if dbus_message_is_signal(message, name, "ActionInvoked") != 0 {
            guard let id = reader.uint32(), let key = reader.string() else { return nil }
            return .actionInvoked(id: id, key: key)
        }
        if dbus_message_is_signal(message, name, "NotificationClosed") != 0 {
            guard let id = reader.uint32(), let reason = reader.uint32() else { return nil }
            return .closed(id: id, reason: reason)
        }
        if dbus_message_is_signal(message, "org.freedesktop.DBus", "NameOwnerChanged") != 0 {
            guard reader.string() == name, let _ = reader.string(), let owner = reader.string() else { return nil }
            return .serverPresent(!owner.isEmpty)
        }
        return nil
    }
}
#else
/// Without libdbus (not Linux): no session bus, so no desktop notifications.
final class NotificationServer: Sendable {
    enum Signal: Sendable, Equatable {
        case actionInvoked(id: UInt32, key: String)
        case closed(id: UInt32, reason: UInt32)
        case serverPresent(Bool)
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "this platform has no D-Bus session bus" }
    }

    let signals = AsyncStream<Signal> { $0.finish() }
    static func sessionBusAddress(environment: [String: String]) -> String? { nil }
    static func connect(address: String) async throws -> NotificationServer { throw Unavailable() }
    func capabilities() async throws -> [String] { throw Unavailable() }
    func serverName() async throws -> String { throw Unavailable() }
    func notify(appName: String, replacing: UInt32, summary: String, body: String, actions: [String], expireTimeout: Int32) async throws -> UInt32 {
        throw Unavailable()
    }
    func close(_ id: UInt32) async throws { throw Unavailable() }
    func disconnect() {}
}
#endif
