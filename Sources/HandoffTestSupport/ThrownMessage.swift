/// The description of what `body` throws; nil when it does not throw. For tests that check an
/// error's message says what to do.
public func thrownMessage(_ body: () throws -> Any) -> String? {
    do { _ = try body() } catch { return "\(error)" }
    return nil
}
