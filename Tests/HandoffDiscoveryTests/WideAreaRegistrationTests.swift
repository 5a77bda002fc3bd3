// Wide-area DNS-SD after an Avahi rename: the records are registered under the instance name the
// TXT record is sealed for, and a change of that name moves them in one dynamic update.
import Logging
import Synchronization
import Testing

@testable import HandoffDiscovery

@Suite("Wide-area registration: under the name the record is sealed for, moved in one update on a rename")
struct WideAreaRegistrationTests {
    static let original = "handoff-0123456789ab"
    static let renamed = "handoff-0123456789ab #2"

    static func advertisement(_ name: String, _ txt: String) -> WideAreaAdvertisement {
        WideAreaAdvertisement(instanceName: name, txtRecord: [UInt8(txt.utf8.count)] + Array(txt.utf8))
    }

    /// Sends the update for `wanted` and answers it with `outcome`; returns the update.
    @discardableResult
    static func answer(_ registration: inout WideAreaRegistration, _ wanted: WideAreaAdvertisement,
                       _ outcome: WideAreaRegistration.Outcome = .accepted) throws -> WideAreaRegistration.Update {
        let update = try #require(registration.onAdvertisement(wanted))
        registration.onAnswer(to: update, outcome)
        return update
    }

    @Test("renamed: the old name removed in the update that adds the new; renamed back; the stop removes the name now registered")
    func renameRenameBackAndStop() throws {
        var registration = WideAreaRegistration()
        #expect(registration.onShutdown() == [], "nothing registered, nothing to remove")
        let first = Self.advertisement(Self.original, "sealed for X")
        #expect(try Self.answer(&registration, first) == .init(advertisement: first, removing: []))
        #expect(registration.onAdvertisement(first) == nil, "the zone holds it already")
        let changed = Self.advertisement(Self.original, "sealed for X, seq 2")
        #expect(try Self.answer(&registration, changed).removing == [], "a new TXT under the same name replaces the old in place")

        let moved = Self.advertisement(Self.renamed, "sealed for X #2")
        #expect(try Self.answer(&registration, moved) == .init(advertisement: moved, removing: [Self.original]))
        #expect(registration.namesInZone == [Self.renamed])
        #expect(registration.registered == moved)

        let back = Self.advertisement(Self.original, "sealed for X again")
        #expect(try Self.answer(&registration, back) == .init(advertisement: back, removing: [Self.renamed]))
        #expect(registration.onShutdown() == [Self.original])
    }

    @Test("a refused rename changed nothing: the old name is still removed when it is sent again")
    func refusedRename() throws {
        var registration = WideAreaRegistration()
        try Self.answer(&registration, Self.advertisement(Self.original, "sealed for X"))
        let moved = Self.advertisement(Self.renamed, "sealed for X #2")
        let refused = try Self.answer(&registration, moved, .refused)
        #expect(registration.namesInZone == [Self.original])
        #expect(registration.onShutdown() == [Self.original])
        #expect(registration.onAdvertisement(moved) == refused, "the same advertisement is sent again, the old name removed with it")
    }

    @Test("an unanswered rename may have been applied: both names are removed, by the next update and at the stop")
    func unansweredRename() throws {
        var registration = WideAreaRegistration()
        try Self.answer(&registration, Self.advertisement(Self.original, "sealed for X"))
        try Self.answer(&registration, Self.advertisement(Self.renamed, "sealed for X #2"), .unanswered)
        #expect(registration.onShutdown() == [Self.original, Self.renamed])
        // Renamed back before the server answered again: the name it may hold now goes.
        let back = Self.advertisement(Self.original, "sealed for X again")
        #expect(registration.onAdvertisement(back)?.removing == [Self.renamed])
        // The same advertisement again after no answer is sent again.
        let again = Self.advertisement(Self.renamed, "sealed for X #2")
        #expect(registration.onAdvertisement(again)?.removing == [Self.original])
    }

    @Test("the records of a rename: the old instance's PTR, SRV and TXT go; the new one's are added, on the host name kept")
    func renameRecords() throws {
        let registrar = Self.registrar { _, _ throws(DNSExchangeError) in throw .timedOut(.zero) }
        let moved = Self.advertisement(Self.renamed, "sealed for X #2")
        let records = try #require(registrar.records(of: .init(advertisement: moved, removing: [Self.original]), address: [198, 18, 1, 1]))
        let type = try #require(DNSName("_handoff._tcp.handoff.test."))
        let (old, new, host) = (try #require(type.prepending(Self.original)), try #require(type.prepending(Self.renamed)),
                                try #require(DNSName("\(Self.original).handoff.test.")))
        #expect(records.map(\.name) == [type, old, new, new, host, type, new, new, host])
        #expect(records[0].recordClass == DNSRecord.classNONE && records[0].rdata == old.wire, "only the PTR to the old instance")
        #expect(records[1].type == DNSRecord.typeANY && records[1].recordClass == DNSRecord.classANY)
        #expect(records[5].rdata == new.wire)
        #expect(records[6].rdata == DNSRecord.srvData(port: 52123, target: host))
        #expect(records[7].rdata == moved.txtRecord)
        #expect(records[8].rdata == [198, 18, 1, 1])
        // The stop: every instance name, and the host once.
        let removal = try #require(registrar.removal(of: [Self.original, Self.renamed]))
        #expect(removal.map(\.name) == [type, old, host, type, new])
    }

    @Test("the registrar: the rename is one update, the stop removes the new name")
    func registrarSendsTheRenameInOneUpdate() async throws {
        let server = FakeDNSServer()
        let registrar = Self.registrar(exchange: server.exchange)
        let run = Task { try await registrar.run() }
        var updates = server.updates.makeAsyncIterator()
        let first = try #require(await updates.next())
        #expect(first.authority.contains { $0.type == DNSRecord.typeTXT && $0.name.labels.first == Self.original })

        registrar.advertise(Self.advertisement(Self.renamed, "sealed for X #2"))
        let rename = try #require(await updates.next())
        let named = { (type: UInt16) in rename.authority.filter { $0.type == type }.map { $0.name.labels.first ?? "" } }
        #expect(named(DNSRecord.typeANY) == [Self.original], "the old instance's records removed")
        #expect(named(DNSRecord.typeTXT) == [Self.renamed, Self.renamed], "its TXT replaced and added under the new name, in the same update")
        #expect(!named(DNSRecord.typeTXT).contains(Self.original))

        run.cancel()
        try await run.value
        let removal = try #require(await updates.next())
        #expect(removal.authority.map { $0.name.labels.first ?? "" } == ["_handoff", Self.renamed, Self.original],
                "the PTR to the new name, its records, and the host's")
        #expect(removal.authority.first?.rdata.starts(with: [UInt8(Self.renamed.utf8.count)] + Array(Self.renamed.utf8)) == true)
    }

    static func registrar(exchange: @escaping WideAreaRegistrar.Exchange) -> WideAreaRegistrar {
        let settings = WideAreaRegistrar.Settings(server: DNSServerAddress("198.18.2.254")!, domain: DNSName("handoff.test.")!,
                                                  key: TSIGKey(name: DNSName("handoff-key.")!, secret: Array("secret".utf8)),
                                                  serviceType: "_handoff._tcp", hostName: original, port: 52123)
        return WideAreaRegistrar(settings: settings, advertisement: advertisement(original, "sealed for X"),
                                 logger: Logger(label: "unit") { _ in SwiftLogNoOpLogHandler() }, wallClockSeconds: { 1_800_000_000 },
                                 exchange: exchange)
    }
}

/// A DNS server in memory that accepts every update and reports it on ``updates``.
private final class FakeDNSServer: Sendable {
    let updates: AsyncStream<DNSMessage>
    private let sink: AsyncStream<DNSMessage>.Continuation

    init() { (updates, sink) = AsyncStream.makeStream() }

    var exchange: WideAreaRegistrar.Exchange {
        { [sink] request, id throws(DNSExchangeError) in
            guard let message = try? DNSMessage(wire: request) else { throw .socket("malformed request") }
            if message.opcode == DNSMessage.opcodeUpdate { sink.yield(message) }
            return (DNSMessage(id: id, flags: 0x8000), "198.18.1.1")
        }
    }
}
