import HandoffCore
import HandoffDiscovery

#if canImport(CDBus)
import CDBus
#endif

/// Asks avahi-daemon for its state on the D-Bus system bus
/// (`org.freedesktop.Avahi.Server.GetState`), as `handoff doctor` reports it. The Avahi compat
/// library the agent uses for DNS-SD reports a missing daemon only as an unknown error; this asks
/// the daemon itself. One private connection per call, on a thread of its own (libdbus blocks).
enum AvahiServerProbe {
    /// How long avahi-daemon has to answer.
    static let timeoutMilliseconds: Int32 = 2000

    /// avahi-daemon's state, or why it did not answer.
    static func state() async -> AgentDiagnosis.AvahiState {
        #if canImport(CDBus)
        await withCheckedContinuation { continuation in
            let started = DetachedThread.start(name: "avahi-probe") { continuation.resume(returning: blockingState()) }
            if !started { continuation.resume(returning: .unavailable("cannot start a thread to ask the system bus")) }
        }
        #else
        .unavailable("this build has no D-Bus")
        #endif
    }

    #if canImport(CDBus)
    private static func blockingState() -> AgentDiagnosis.AvahiState {
        _ = dbus_threads_init_default()
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
            return .unavailable("no D-Bus system bus: \(SessionBusError.text(error))")
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        defer {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        guard let call = dbus_message_new_method_call("org.freedesktop.Avahi", "/", "org.freedesktop.Avahi.Server", "GetState") else {
            return .unavailable("out of memory")
        }
        defer { dbus_message_unref(call) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, call, timeoutMilliseconds, &error) else {
            return .unavailable("org.freedesktop.Avahi is not on the system bus: \(SessionBusError.text(error))")
        }
        defer { dbus_message_unref(reply) }
        var reader = DBusArgumentReader(reply)
        guard let state = reader.int32() else { return .unavailable("GetState answered without a state") }
        return state == 2 ? .running : .state(Int(state))
    }
    #endif
}
