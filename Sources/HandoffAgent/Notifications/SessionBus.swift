#if canImport(CDBus)
import CDBus
import HandoffDiscovery
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private connection to the user's D-Bus session bus (libdbus-1), owned by one thread of its own.
///
/// libdbus's calls block, and a connection is best used from one thread; so every call on the
/// connection happens on this one thread, which sleeps in `poll()` on the
/// bus socket and a ``WakePipe``. Work for it is queued with ``perform(_:)``; signal messages
/// (from the match rules given to ``open(address:matchRules:onSignal:onClose:)``) go to `onSignal` on the
/// thread. The thread ends, and the connection closes, with ``close()`` or when the bus goes away;
/// then `onClose` runs.
final class SessionBus: Sendable {
    /// Work for the bus thread: gets the connection, or nil once it is closed.
    typealias Work = @Sendable (OpaquePointer?) -> Void

    private struct Queue {
        var work: [Work] = []
        var closing = false
        var closed = false
    }

    private let queue = Mutex(Queue())
    private let wakePipe: WakePipe
    private let onClose: @Sendable () -> Void

    private init(wakePipe: WakePipe, onClose: @escaping @Sendable () -> Void) {
        self.wakePipe = wakePipe
        self.onClose = onClose
    }

    /// The session bus's address: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` when
    /// that socket exists (as systemd's user bus), else nil. libdbus's autolaunch (which may
    /// spawn `dbus-launch`) is never used.
    static func address(environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            var status = stat()
            let path = runtime + "/bus"
            if stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFSOCK { return "unix:path=" + path }
        }
        return nil
    }

    /// Connects to the bus at `address` and registers with it (`Hello`), on a thread of its own,
    /// and adds the match rules. `onSignal` gets each signal message on the bus thread; `onClose`
    /// runs once when the connection has closed (also when opening fails).
    static func open(address: String, matchRules: [String], onSignal: @escaping @Sendable (OpaquePointer) -> Void,
                     onClose: @escaping @Sendable () -> Void) async throws(SessionBusError) -> SessionBus {
        guard let wakePipe = WakePipe() else { throw SessionBusError("no file descriptors left for a wake-up pipe") }
        // Each connection has its own thread, but a closing connection's thread may still run
        // while the next one opens: libdbus's global state must be locked (libdbus 1.7+ does
        // this by itself; the call is idempotent).
        _ = dbus_threads_init_default()
        let bus = SessionBus(wakePipe: wakePipe, onClose: onClose)
        let opened: Result<Void, SessionBusError> = await withCheckedContinuation { continuation in
            let started = DetachedThread.start(name: "dbus-session") {
                bus.run(address: address, matchRules: matchRules, onSignal: onSignal) { continuation.resume(returning: $0) }
            }
            if !started { continuation.resume(returning: .failure(SessionBusError("cannot start a thread for the session bus"))) }
        }
        try opened.get()
        return bus
    }

    /// Runs `work` on the bus thread (with nil if the connection is closed) and returns its result.
    func perform<Value: Sendable>(_ work: @escaping @Sendable (OpaquePointer?) -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: work($0)) }
        }
    }

    /// Queues `work` for the bus thread; runs it at once with nil if the connection is closed.
    func enqueue(_ work: @escaping Work) {
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.closed else { return false }
            queue.work.append(work)
            return true
        }
        if accepted { wakePipe.wake() } else { work(nil) }
    }

    /// Closes the connection; the thread exits soon.
    func close() {
        queue.withLock { $0.closing = true }
        wakePipe.wake()
    }

    // MARK: The bus thread

    private func run(address: String, matchRules: [String], onSignal: @Sendable (OpaquePointer) -> Void,
                     opened: (Result<Void, SessionBusError>) -> Void) {
        guard let connection = Self.connect(address: address, matchRules: matchRules, opened: opened) else {
            finish(connection: nil)
            return
        }
        var descriptor: Int32 = -1
        _ = dbus_connection_get_socket(connection, &descriptor)
        opened(.success(()))
        loop: while true {
            let (work, closing) = queue.withLock { queue in
                defer { queue.work.removeAll() }
                return (queue.work, queue.closing)
            }
            for item in work { item(connection) }
            if closing { break }
            // Reads what arrived and writes what is queued, without blocking; false when disconnected.
            guard dbus_connection_read_write(connection, 0) != 0 else { break }
            while let message = dbus_connection_pop_message(connection) {
                defer { dbus_message_unref(message) }
                if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 { break loop }
                if dbus_message_get_type(message) == DBusType.messageSignal { onSignal(message) }
            }
            guard dbus_connection_get_is_connected(connection) != 0 else { break }
            let output: Int16 = dbus_connection_has_messages_to_send(connection) != 0 ? Int16(POLLOUT) : 0
            var descriptors = [pollfd(fd: wakePipe.readDescriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: descriptor, events: Int16(POLLIN) | output, revents: 0)]
            if poll(&descriptors, 2, -1) < 0, errno != EINTR { break }
            wakePipe.drain()
        }
        finish(connection: connection)
    }

    private static func connect(address: String, matchRules: [String], opened: (Result<Void, SessionBusError>) -> Void) -> OpaquePointer? {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error) else {
            opened(.failure(SessionBusError(cannotConnectTo: address, error)))
            return nil
        }
        // A lost bus must not end the agent (libdbus's default for bus connections is _exit).
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0 else {
            opened(.failure(SessionBusError(cannotConnectTo: address, error)))
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            return nil
        }
        for rule in matchRules {
            dbus_bus_add_match(connection, rule, &error)
            if dbus_error_is_set(&error) != 0 {
                opened(.failure(SessionBusError("the session bus refused the match rule \(rule): \(SessionBusError.text(error))")))
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                return nil
            }
        }
        return connection
    }

    private func finish(connection: OpaquePointer?) {
        if let connection {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        let left = queue.withLock { queue in
            queue.closed = true
            defer { queue.work.removeAll() }
            return queue.work
        }
        for item in left { item(nil) }
        onClose()
    }
}

/// Why the session bus cannot be used.
struct SessionBusError: Error, Sendable, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }

    init(cannotConnectTo address: String, _ error: DBusError) {
        self.init("cannot connect to the session bus at \(address): \(Self.text(error))")
    }

    /// A libdbus error's name and message.
    static func text(_ error: DBusError) -> String {
        let name = error.name.map { String(cString: $0) } ?? "unknown error"
        let message = error.message.map { String(cString: $0) } ?? ""
        return message.isEmpty ? name : "\(message) (\(name))"
    }
}
#endif
