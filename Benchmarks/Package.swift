// swift-tools-version: 6.1
// Benchmarks for handoff: a separate package so that the product's Package.swift stays free of
// benchmark dependencies.
//
//   swift package benchmark                                   # micro benchmarks (ordo-one/benchmark)
//   swift package benchmark thresholds check                  # against Thresholds/
//   swift package --allow-writing-to-package-directory benchmark thresholds update
//   ../scripts/bench                                          # macro benchmarks on simulated hosts
//
// The macro benchmarks' clients (Benchmarks/Clients/: handoff-bench, stream-bench) are targets of
// the root package, so that the test build makes them and CI can run `scripts/bench --short`.
import PackageDescription

let package = Package(
    name: "handoff-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The MallocInterposer trait alone: the default traits also pull in the runtime
        // interposer, which this machine's package mirror does not have.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(name: "handoff", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // Micro benchmarks: HandoffCore only (frames, FrameParser, userInfo coding, TXT).
        .executableTarget(
            name: "CoreCoding",
            dependencies: [
                .product(name: "HandoffTestSupport", package: "handoff"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "HandoffCore", package: "handoff"),
            ],
            path: "Benchmarks/CoreCoding",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),

        // Micro benchmarks: the NIO frame codec and a relayed chunk (decoder -> encoder).
        .executableTarget(
            name: "TransportRelay",
            dependencies: [
                .product(name: "HandoffTestSupport", package: "handoff"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "HandoffCore", package: "handoff"),
                .product(name: "HandoffTransport", package: "handoff"),
                .product(name: "HandoffTrust", package: "handoff"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Benchmarks/TransportRelay",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
