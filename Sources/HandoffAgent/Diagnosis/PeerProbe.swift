import HandoffCore

/// One pinned TLS connection to a paired device for `handoff doctor`: hello, then a ping, as
/// liveness sends them. The connection tells apart a device that cannot be reached from one whose
/// agent answers but refuses this device (TLS pinned to another certificate, or no pong because it
/// unpaired this one).
enum PeerProbe {
    /// How long the whole exchange may take.
    static let timeout: Duration = .seconds(3)

    /// Connects to `endpoint` through `connector` and greets it (``PeerGreeting``), within
    /// ``timeout`` on `clock` (the agent's).
    static func run(_ endpoint: PeerEndpoint, connector: any PeerConnector, hello: PeerHello,
                    clock: any Clock<Duration>) async -> AgentDiagnosis.ProbeOutcome {
        switch await Deadline.race(timeout, on: clock, { await exchange(endpoint, connector: connector, hello: hello) }) {
        case .value(let outcome): outcome
        case .timedOut: .unreachable("no answer within \(timeout)")
        case .failed(let error): .unreachable("\(error)")
        }
    }

    private static func exchange(_ endpoint: PeerEndpoint, connector: any PeerConnector, hello: PeerHello) async -> AgentDiagnosis.ProbeOutcome {
        let connection: any FrameConnection
        do {
            connection = try await connector.connect(to: endpoint, limits: FrameLimits())
        } catch let error as PeerConnectError {
            switch error.code {
            case .wrongCertificate, .handshakeFailed: return .refused("\(error.reason) at \(endpoint.host):\(endpoint.port)")
            default: return .unreachable("\(error.reason) at \(endpoint.host):\(endpoint.port)")
            }
        } catch {
            return .unreachable("\(error) at \(endpoint.host):\(endpoint.port)")
        }
        let outcome: AgentDiagnosis.ProbeOutcome
        do {
            switch try await PeerGreeting.greet(connection, hello: hello) {
            case .paired: outcome = .accepted
            case .noHello: outcome = .refused("the agent there did not answer hello (TLS accepted, pairing not)")
            case .noPong: outcome = .refused("the agent there did not answer the ping: it may have unpaired this device")
            }
        } catch {
            outcome = .refused("the connection failed: \(error)")
        }
        await connection.close()
        return outcome
    }
}
