import HandoffCore
import HandoffTransport
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The agent's end of one control connection: responses and pushed events share its writer, one
/// frame at a time. An app's connection carries its manifest once it has registered.
public actor ControlLink {
    /// Identifies the connection (and the activities its app published).
    public nonisolated let id = UUID.random()
    private let outbound: NIOAsyncChannelOutboundWriter<Frame>
    /// The app on this connection, after `registerApp`.
    public private(set) var manifest: AppManifest?

    public init(outbound: NIOAsyncChannelOutboundWriter<Frame>) {
        self.outbound = outbound
    }

    /// The connection's `watch` subscriptions (``AgentEventHub``).
    private var watches: [UUID] = []

    func register(_ manifest: AppManifest) { self.manifest = manifest }

    func watching(_ subscription: UUID) { watches.append(subscription) }

    /// Ends the connection's watches (it closed).
    func endWatches(_ hub: AgentEventHub) {
        for id in watches { hub.unsubscribe(id) }
        watches.removeAll()
    }

    /// Closes the connection.
    func close() { outbound.finish() }

    /// Sends a response or an event; false when the connection is gone.
    @discardableResult
    public func send(_ body: JSONValue) async -> Bool {
        do {
            try await outbound.write(Frame(kind: .controlResponse, payload: body.serializedBytes))
            return true
        } catch {
            return false
        }
    }
}
