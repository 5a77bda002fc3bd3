/// Byte counts as people read them: `812 B`, `3.4 KiB`, `1.2 GiB`.
public enum ByteCount {
    /// `bytes` in the largest binary unit that keeps it at 1 or more, to a tenth.
    public static func text(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) \(units[unit])"
    }
}
