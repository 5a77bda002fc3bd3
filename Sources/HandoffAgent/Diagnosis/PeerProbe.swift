import HandoffCore

/// One pinned TLS connection to a paired device for `handoff doctor`: hello, then a ping, as
/// liveness sends them. The connection tells apart a device that cannot be reached from one whose
/// agent answers but refuses this device (TLS pinned to another certificate, or no pong because it
/// unpaired this one).
enum PeerProbe {
    /// How long the whole exchange may take.
    static let timeout: Duration = .seconds(3)

    /// Connects to `endpoint` through `connector` and sends hello and ping.
    static func run(_ endpoint: PeerEndpoint, connector: any PeerConnector, hello: PeerHello) async -> AgentDiagnosis.ProbeOutcome {
        await withTaskGroup(of: AgentDiagnosis.ProbeOutcome?.self) { group in
            group.addTask { await exchange(endpoint, connector: connector, hello: hello) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .unreachable("no answer within \(timeout)")
            }
            var outcome: AgentDiagnosis.ProbeOutcome = .unreachable("no answer")
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            return outcome
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
        let outcome = await greet(connection, hello: hello)
        await connection.close()
        return outcome
    }

    /// Hello and ping on an open (TLS-pinned) connection.
    private static func greet(_ connection: any FrameConnection, hello: PeerHello) async -> AgentDiagnosis.ProbeOutcome {
        do {
            try await connection.send([PeerMessage.hello(hello).frame, PeerMessage.ping(sequence: 0).frame])
            guard let first = try await connection.receive(), case .hello = try PeerMessage(frame: first) else {
                return .refused("the agent there did not answer hello (TLS accepted, pairing not)")
            }
            guard let second = try await connection.receive(), second.kind == .pong else {
                return .refused("the agent there did not answer the ping: it may have unpaired this device")
            }
            return .accepted
        } catch {
            return .refused("the connection failed: \(error)")
        }
    }
}
