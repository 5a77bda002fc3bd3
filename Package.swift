// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "handoff",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "handoffd", targets: ["handoffd"]),
        .executable(name: "handoff", targets: ["handoff"]),
        .executable(name: "notes-example", targets: ["notes-example"]),
        .library(name: "HandoffCore", targets: ["HandoffCore"]),
        .library(name: "HandoffDiscovery", targets: ["HandoffDiscovery"]),
        .library(name: "HandoffTrust", targets: ["HandoffTrust"]),
        .library(name: "HandoffTransport", targets: ["HandoffTransport"]),
        .library(name: "HandoffConfiguration", targets: ["HandoffConfiguration"]),
        .library(name: "HandoffSaved", targets: ["HandoffSaved"]),
        .library(name: "HandoffAgent", targets: ["HandoffAgent"]),
        .library(name: "HandoffKit", targets: ["HandoffKit"]),
        .library(name: "HandoffTestSupport", targets: ["HandoffTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // No traits: its default trait JSON imports all of Foundation (JSONSerialization), and the
        // configuration file is parsed by HandoffCore's JSON into an InMemoryProvider.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: []),
        // 4.x imports FoundationEssentials only on Linux (3.x imports Foundation, and so ICU).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        // Pure core: activity model, property-list userInfo, errors, wire protocol, state machines.
        // No NIO, no I/O.
        .target(name: "HandoffCore"),

        // Avahi's dns_sd compatibility library on Linux; the system's dns_sd on macOS.
        .systemLibrary(
            name: "CDNSSD",
            pkgConfig: "avahi-compat-libdns_sd",
            providers: [.apt(["libavahi-compat-libdnssd-dev"])]
        ),
        .target(
            name: "HandoffDiscovery",
            dependencies: [
                "HandoffCore",
                .target(name: "CDNSSD", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Trust: device identity (key pair, self-signed certificate, device ID), the paired
        // devices, sealed advertisements, the pairing exchange. No NIO.
        .target(
            name: "HandoffTrust",
            dependencies: [
                "HandoffCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .target(
            name: "HandoffTransport",
            dependencies: [
                "HandoffCore", "HandoffTrust",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // libdbus-1, for the desktop notifications (org.freedesktop.Notifications on the session bus).
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // handoffd's configuration: the JSON file, its defaults and its checks. Apart from the
        // agent so that the configuration fuzzer builds without NIO, TLS and D-Bus.
        .target(
            name: "HandoffConfiguration",
            dependencies: [
                "HandoffCore",
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // The system's SQLite (with FTS5), for the saved activities.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Saved activities and their full-text index (SQLite through its C API: GRDB imports
        // Foundation, and so ICU), apart from the agent so that only what searches links SQLite.
        .target(
            name: "HandoffSaved",
            dependencies: ["HandoffCore", "CSQLite"]
        ),
        .target(
            name: "HandoffAgent",
            dependencies: [
                "CHandoffShims", "HandoffConfiguration", "HandoffCore", "HandoffDiscovery", "HandoffSaved", "HandoffTransport", "HandoffTrust",
                .target(name: "CDBus", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ]
        ),
        // The library apps link: UserActivity, HandoffApplication and their delegates.
        .target(
            name: "HandoffKit",
            dependencies: [
                "HandoffCore", "HandoffTransport", "HandoffTrust",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Small C shims for what Swift's Glibc module does not export (mallopt, O_DIRECT).
        .target(name: "CHandoffShims"),
        .executableTarget(
            name: "handoffd",
            dependencies: [
                "CHandoffShims", "HandoffAgent", "HandoffConfiguration", "HandoffCore", "HandoffDiscovery", "HandoffTransport", "HandoffTrust",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "handoff",
            dependencies: [
                "HandoffCore", "HandoffTransport", "HandoffTrust",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Examples/: a notes editor that uses HandoffKit on two hosts.
        .executableTarget(
            name: "notes-example",
            dependencies: [
                "HandoffKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Examples/NotesEditor"
        ),
        // Helpers for tests and benchmarks: a manual clock, an in-memory peer transport, the
        // benchmark fixtures (a product, so that the micro benchmarks in Benchmarks/ share them).
        .target(name: "HandoffTestSupport", dependencies: ["HandoffCore", "HandoffTransport"]),
        // The macro benchmarks' clients, which scripts/bench runs inside the lab's hosts. Here, not
        // in Benchmarks/Package.swift, so that the test build makes them (CI runs `bench --short`).
        .executableTarget(
            name: "handoff-bench",
            dependencies: [
                "HandoffAgent", "HandoffCore", "HandoffDiscovery", "HandoffTestSupport", "HandoffTransport", "HandoffTrust",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            path: "Benchmarks/Clients/handoff-bench"
        ),
        // Continuation-stream benchmarks, written as an app writes them: with HandoffKit.
        .executableTarget(name: "stream-bench", dependencies: ["HandoffKit", "HandoffTestSupport"], path: "Benchmarks/Clients/stream-bench"),

        .testTarget(name: "HandoffDiscoveryTests", dependencies: ["HandoffDiscovery"]),
        .testTarget(name: "HandoffTrustTests", dependencies: ["HandoffTrust", "HandoffCore", "HandoffTestSupport"]),
        .testTarget(
            name: "HandoffKitTests",
            dependencies: [
                "HandoffKit", "HandoffAgent", "HandoffConfiguration", "HandoffDiscovery", "HandoffTransport", "HandoffTrust",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(name: "HandoffCoreTests", dependencies: ["HandoffCore", "HandoffTestSupport"]),
        .testTarget(name: "HandoffSavedTests", dependencies: ["HandoffSaved", "HandoffCore"]),
        .testTarget(
            name: "HandoffTransportTests",
            dependencies: [
                "HandoffCore", "HandoffTestSupport", "HandoffTransport", "HandoffTrust",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "HandoffAgentTests",
            dependencies: [
                "HandoffAgent", "HandoffConfiguration", "HandoffCore", "HandoffDiscovery", "HandoffKit", "HandoffTestSupport", "HandoffTransport", "HandoffTrust",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "HandoffIntegrationTests", dependencies: ["HandoffCore", "HandoffAgent", "HandoffTestSupport", "HandoffTrust"]),
    ],
    swiftLanguageModes: [.v6]
)
