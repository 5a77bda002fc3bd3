#if canImport(dnssd)
import dnssd
#else
import CDNSSD
#endif
import Logging
import ServiceLifecycle
import Synchronization

/// Registers one DNS-SD service (e.g. `h1._handoff._tcp.local.`) and keeps it registered.
///
/// A ServiceLifecycle `Service`: `run()` registers, re-registers with backoff whenever dns_sd
/// reports an error (Avahi reports a restarted avahi-daemon as `kDNSServiceErr_Unknown`), and on
/// graceful shutdown or cancellation deallocates the registration, which makes the daemon send
/// the goodbye so peers drop the service at once.
///
/// ```swift
/// let advertiser = ServiceAdvertiser(name: "h1", serviceType: "_handoff._tcp", port: 7000,
///                                    txtRecord: txt, logger: logger)
/// // in a ServiceGroup, or: try await advertiser.run()
/// advertiser.updateTXTRecord(newTXT)
/// ```
public final class ServiceAdvertiser: Service, Sendable {
    private struct State {
        var txtRecord: [UInt8]
        var registeredName: String?
        var registration: DNSServiceOperation?
        /// Whether the current registration has been confirmed by its callback.
        var registrationConfirmed = false
        /// The TXT rdata the current registration was created or last updated with.
        var publishedTXTRecord: [UInt8]?
        var hasRun = false
    }

    /// How many names (`name`, `name #2`, ...) to try in a row when the name is taken locally.
    static let maximumNameAttempts = 100

    private let name: String
    private let serviceType: String
    private let port: UInt16
    private let backoff: DNSServiceBackoff
    private let logger: Logger
    private let state: Mutex<State>
    /// Where ``registeredNames`` are yielded.
    private let names: AsyncStream<String>.Continuation
    /// The thread that creates, polls and deallocates the registration's ref.
    private let poller = DNSServicePoller(threadName: "dnssd-advertise")

    /// - Parameters:
    ///   - name: the instance name to register, e.g. the host name; Avahi appends " #2" etc. on
    ///     conflict (see `registeredName`).
    ///   - serviceType: e.g. `"_handoff._tcp"`.
    ///   - port: the TCP/UDP port in host byte order.
    ///   - txtRecord: the TXT rdata, already encoded as length-prefixed strings; empty means no
    ///     keys (published as a single empty string, as DNS-SD requires).
    ///   - backoff: delays between re-registration attempts after errors.
    ///   - logger: gets `handoff.service` metadata added.
    public init(
        name: String,
        serviceType: String,
        port: UInt16,
        txtRecord: [UInt8],
        backoff: DNSServiceBackoff = .init(),
        logger: Logger
    ) {
        self.name = name
        self.serviceType = serviceType
        self.port = port
        self.backoff = backoff
        var logger = logger
        logger[metadataKey: "handoff.service"] = "\(name).\(serviceType)"
        self.logger = logger
        self.state = Mutex(State(txtRecord: txtRecord))
        (registeredNames, names) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The instance names the daemon confirms, each time it confirms another one: the first
    /// registration, a rename after a name conflict (Avahi renames a registered service by itself,
    /// `"h1"` → `"h1 #2"`), and the name after a re-registration. Whoever seals the TXT record for
    /// the instance name (the agent) seals it again at once. Only the newest name is kept for a
    /// slow reader; one reader.
    public let registeredNames: AsyncStream<String>

    /// The instance name actually registered (Avahi renames on conflict, e.g. `"h1 #2"`), or nil
    /// while not registered (before the daemon confirmed, and between a failure and the
    /// re-registration).
    public var registeredName: String? {
        state.withLock { $0.registeredName }
    }

    /// The TXT rdata to publish: the newest given (``updateTXTRecord(_:)``), applied to the live
    /// registration or waiting for it.
    public var txtRecord: [UInt8] {
        state.withLock { $0.txtRecord }
    }

    /// Sets the TXT rdata (already encoded: length-prefixed strings) to publish.
    ///
    /// Applies it to the live registration with `DNSServiceUpdateRecord(ref, nil, 0, ...)` (peers
    /// see the change within a fraction of a second) and keeps it for re-registrations. While a
    /// registration is still being confirmed (name probing, about a second) the update is held
    /// and applied on confirmation, because Avahi restarts probing on every update. Can be
    /// called at any time, also before `run()`. Malformed rdata (a length byte running past the
    /// end, or more than 65535 bytes) is logged and ignored.
    public func updateTXTRecord(_ txt: [UInt8]) {
        guard TXTRecordValidation.isWellFormed(txt) else {
            logger.info(
                "Ignoring malformed TXT record update",
                metadata: ["handoff.txt.length": "\(txt.count)"])
            return
        }
        let registration = state.withLock { state -> DNSServiceOperation? in
            state.txtRecord = txt
            // Until the daemon confirms the registration the update waits: Avahi restarts probing
            // on every update, so frequent updates would keep the service from ever being
            // announced. `registered(_:)` applies it.
            return state.registrationConfirmed ? state.registration : nil
        }
        if let registration { publishLatestTXTRecord(on: registration) }
    }

    /// Queues `DNSServiceUpdateRecord` with the latest TXT rdata on the poller's thread.
    /// The work reads the TXT when it runs, so racing updates end with the last one.
    private func publishLatestTXTRecord(on registration: DNSServiceOperation) {
        registration.perform { [self] ref in
            let latest = state.withLock { state -> [UInt8]? in
                let txt = TXTRecordValidation.publishable(state.txtRecord)
                return txt == state.publishedTXTRecord ? nil : txt
            }
            guard let latest else { return }
            let result = latest.withUnsafeBytes { buffer in
                DNSServiceUpdateRecord(ref, nil, 0, UInt16(buffer.count), buffer.baseAddress, 0)
            }
            if result == DNSSDConstants.errNoError {
                state.withLock { $0.publishedTXTRecord = latest }
                logger.debug("Updated TXT record", metadata: ["handoff.txt.length": "\(latest.count)"])
            } else {
                logger.info(
                    "Could not update the TXT record; it is kept for the next registration",
                    metadata: ["dnssd.error": "\(DNSServiceError(code: result, operation: "DNSServiceUpdateRecord"))"])
            }
        }
    }

    /// Registers the service and keeps it registered until graceful shutdown or cancellation.
    ///
    /// After an error the service is registered again after `backoff.delay(afterFailures:)`
    /// (failures counted since the last confirmed registration). On shutdown the registration is
    /// deallocated before `run()` returns, so the daemon sends the goodbye. Returns normally on
    /// shutdown or cancellation; throws a `DNSServiceError` only for errors that retrying cannot
    /// fix (bad service type or name, malformed TXT record).
    public func run() async throws {
        let firstRun = state.withLock { state -> Bool in
            defer { state.hasRun = true }
            return !state.hasRun
        }
        guard firstRun else {
            logger.info("ServiceAdvertiser.run() called more than once; ignoring")
            return
        }
        do {
            try await cancelWhenGracefulShutdown { [self] in
                try await keepRegistered()
            }
        } catch {
            await poller.stop()
            names.finish()
            throw error
        }
        await poller.stop()
        names.finish()
    }

    private func keepRegistered() async throws {
        var restarts = DNSServiceRestarts(backoff: backoff)
        var nameAttempt = 1
        while !Task.isCancelled {
            let candidate = AlternativeServiceName.candidate(name, attempt: nameAttempt)
            let registration = makeRegistration(name: candidate)
            state.withLock { state in
                state.registration = registration
                state.registrationConfirmed = false
                state.publishedTXTRecord = nil
            }
            let error = await registration.run()
            let wasConfirmed = state.withLock { state -> Bool in
                state.registration = nil
                state.registeredName = nil
                return state.registrationConfirmed
            }
            guard let error else {
                logger.info("Unregistered")
                return
            }
            if Task.isCancelled { return }
            if error.code == DNSSDConstants.errNameConflict && nameAttempt < Self.maximumNameAttempts {
                // Taken through the same daemon (Avahi renames only on conflicts with other
                // hosts): try the next name at once.
                nameAttempt += 1
                logger.info(
                    "Name already registered on this host; trying another",
                    metadata: ["handoff.registered.name": "\(AlternativeServiceName.candidate(name, attempt: nameAttempt))"])
                continue
            }
            // Other failures (e.g. a restarted daemon) start again from the configured name.
            nameAttempt = 1
            guard error.isRetryable else {
                logger.error("Registration failed permanently", metadata: ["dnssd.error": "\(error)"])
                throw error
            }
            guard
                await restarts.waitAfterFailure(
                    error, succeededSinceLastFailure: wasConfirmed, logger: logger, "Registration failed; registering again")
            else { return }
        }
    }

    private func makeRegistration(name: String) -> DNSServiceOperation {
        DNSServiceOperation(
            name: "DNSServiceRegister",
            poller: poller,
            replyHandler: .register { [self] reply in registered(reply) },
            logger: logger
        ) { [self, serviceType, port] ref, context in
            // Read the TXT record here, on the poller's thread, so that an update queued with
            // `perform` after this point is applied after the registration.
            let txt = state.withLock { state -> [UInt8] in
                let txt = TXTRecordValidation.publishable(state.txtRecord)
                state.publishedTXTRecord = txt
                return txt
            }
            guard TXTRecordValidation.isWellFormed(txt) else { return DNSSDConstants.errBadParam }
            return txt.withUnsafeBytes { buffer in
                DNSServiceRegister(
                    ref, 0, DNSSDConstants.interfaceIndexAny, name, serviceType, nil, nil, port.bigEndian,
                    UInt16(buffer.count), buffer.baseAddress, DNSServiceCallbacks.register, context)
            }
        }
    }

    private func registered(_ reply: RegisterReply) {
        let (previous, registration) = state.withLock { state -> (String?, DNSServiceOperation?) in
            defer {
                state.registeredName = reply.name
                state.registrationConfirmed = true
            }
            return (state.registeredName, state.registration)
        }
        // Apply a TXT update that arrived while the registration was being confirmed (a no-op
        // when the TXT is unchanged).
        if let registration { publishLatestTXTRecord(on: registration) }
        guard previous != reply.name else { return }
        names.yield(reply.name)
        if reply.name == name {
            logger.info("Registered", metadata: ["handoff.registered.name": "\(reply.name)"])
        } else {
            logger.info(
                "Registered under another name because of a name conflict",
                metadata: ["handoff.registered.name": "\(reply.name)"])
        }
    }
}
