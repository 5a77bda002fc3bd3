extension Duration {
    /// The duration in seconds, as a `Double`: for rates (tokens per second) and `Date` arithmetic.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole nanoseconds (truncated), clamped to `Int64`: for APIs that count
    /// nanoseconds, such as `DispatchTime`. For SwiftNIO use its own `TimeAmount(_: Duration)`.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowed) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflow, !overflowed else { return seconds < 0 ? .min : .max }
        return sum
    }

    /// The duration in whole milliseconds, rounded towards zero (the `…Ms` fault values).
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration for people, in seconds: "2 s", "0.25 s".
    public var secondsText: String {
        let value = inSeconds
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
