/// Why a liveness connection failed or ended: the peer did not greet, or sent what liveness does
/// not take on it.
struct LivenessProbeError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
