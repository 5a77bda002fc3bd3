#if canImport(CDBus)
import CDBus

/// D-Bus type codes and message types (libdbus's `DBUS_TYPE_*` macros, which Swift does not import).
enum DBusType {
    static let string = Int32(UInt8(ascii: "s"))
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let int32 = Int32(UInt8(ascii: "i"))
    static let array = Int32(UInt8(ascii: "a"))
    static let invalid: Int32 = 0
    static let messageSignal: Int32 = 4
}

/// Writes a message's arguments with libdbus's non-variadic `dbus_message_iter_*` calls (Swift
/// cannot call `dbus_message_append_args`). Strings lose NUL characters, which D-Bus refuses.
struct DBusArgumentWriter {
    private var iterator = DBusMessageIter()
    /// False once libdbus refused an argument (out of memory).
    private(set) var ok = true

    init(_ message: OpaquePointer) {
        dbus_message_iter_init_append(message, &iterator)
    }

    mutating func append(_ text: String) {
        ok = Self.append(text, to: &iterator) && ok
    }

    mutating func append(_ value: UInt32) {
        var value = value
        ok = dbus_message_iter_append_basic(&iterator, DBusType.uint32, &value) != 0 && ok
    }

    mutating func append(_ value: Int32) {
        var value = value
        ok = dbus_message_iter_append_basic(&iterator, DBusType.int32, &value) != 0 && ok
    }

    /// An `as`.
    mutating func append(_ strings: [String]) {
        var inner = DBusMessageIter()
        guard dbus_message_iter_open_container(&iterator, DBusType.array, "s", &inner) != 0 else { ok = false; return }
        for text in strings { ok = Self.append(text, to: &inner) && ok }
        ok = dbus_message_iter_close_container(&iterator, &inner) != 0 && ok
    }

    /// An empty `a{sv}` (no hints).
    mutating func appendEmptyDictionary() {
        var inner = DBusMessageIter()
        guard dbus_message_iter_open_container(&iterator, DBusType.array, "{sv}", &inner) != 0 else { ok = false; return }
        ok = dbus_message_iter_close_container(&iterator, &inner) != 0 && ok
    }

    private static func append(_ text: String, to iterator: inout DBusMessageIter) -> Bool {
        String(text.filter { $0 != "\0" }).withCString { pointer in
            var value: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, DBusType.string, &value) != 0
        }
    }
}

/// Reads a message's arguments in order; a value of another type than asked reads as nil.
struct DBusArgumentReader {
    private var iterator = DBusMessageIter()
    private var atEnd: Bool

    init(_ message: OpaquePointer) {
        atEnd = dbus_message_iter_init(message, &iterator) == 0
    }

    mutating func uint32() -> UInt32? {
        guard !atEnd, dbus_message_iter_get_arg_type(&iterator) == DBusType.uint32 else { return nil }
        var value: UInt32 = 0
        dbus_message_iter_get_basic(&iterator, &value)
        advance()
        return value
    }

    mutating func int32() -> Int32? {
        guard !atEnd, dbus_message_iter_get_arg_type(&iterator) == DBusType.int32 else { return nil }
        var value: Int32 = 0
        dbus_message_iter_get_basic(&iterator, &value)
        advance()
        return value
    }

    mutating func string() -> String? {
        guard !atEnd, let value = Self.string(at: &iterator) else { return nil }
        advance()
        return value
    }

    /// An `as`.
    mutating func strings() -> [String]? {
        guard !atEnd, dbus_message_iter_get_arg_type(&iterator) == DBusType.array else { return nil }
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &inner)
        var strings: [String] = []
        while let text = Self.string(at: &inner) {
            strings.append(text)
            if dbus_message_iter_next(&inner) == 0 { break }
        }
        advance()
        return strings
    }

    private mutating func advance() {
        atEnd = dbus_message_iter_next(&iterator) == 0
    }

    private static func string(at iterator: inout DBusMessageIter) -> String? {
        guard dbus_message_iter_get_arg_type(&iterator) == DBusType.string else { return nil }
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) }
    }
}
#endif
