import Logging

/// The failures in a row of a dns_sd operation that its owner keeps restarting (the advertiser's
/// registration, the browser's browse), and the wait before each restart.
struct DNSServiceRestarts {
    let backoff: DNSServiceBackoff
    /// Failures in a row; the first failure after a success counts as 1 again.
    private(set) var failures = 0

    init(backoff: DNSServiceBackoff) {
        self.backoff = backoff
    }

    /// Counts `error` as a failure (as the first one if the operation succeeded since the last
    /// failure), logs `message` at warning with the error and the delay, and sleeps for
    /// `backoff.delay(afterFailures:)`. Returns false if the task was cancelled while sleeping.
    mutating func waitAfterFailure(
        _ error: DNSServiceError, succeededSinceLastFailure: Bool, logger: Logger, _ message: Logger.Message
    ) async -> Bool {
        failures = succeededSinceLastFailure ? 1 : failures + 1
        let delay = backoff.delay(afterFailures: failures)
        logger.warning(
            message,
            metadata: [
                "dnssd.error": "\(error)", "handoff.retry.delay": "\(delay)", "handoff.retry.failures": "\(failures)",
            ])
        do {
            try await Task.sleep(for: delay)
            return true
        } catch {
            return false
        }
    }
}
