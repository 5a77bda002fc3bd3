// swift-tools-version: 6.1
// libFuzzer targets for handoff's decoders. A separate package, so the main build never needs the
// fuzzing sanitizer. Build and run with scripts/fuzz (docs/RELIABILITY.md, "Fuzzing"); by hand:
//
//   swift build --package-path Fuzz --scratch-path Fuzz/.build -c release \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product FuzzJSONParser
//
// Every Fuzz* executable except FuzzSeeds exports LLVMFuzzerTestOneInput and gets its main from
// libFuzzer. FuzzSeeds is an ordinary program that writes the seed corpora in Corpus/; build it
// without the sanitizer flags (scripts/fuzz --seeds).
import PackageDescription

let handoffCore = Target.Dependency.product(name: "HandoffCore", package: "handoff")
let handoffConfiguration = Target.Dependency.product(name: "HandoffConfiguration", package: "handoff")
let handoffTrust = Target.Dependency.product(name: "HandoffTrust", package: "handoff")

let package = Package(
    name: "handoff-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "handoff", path: ".."),
    ],
    targets: [
        // libFuzzer's LLVMFuzzerRunDriver, called from each target's main.swift.
        .target(name: "CLibFuzzer"),
        // Running libFuzzer; reporting an invariant failure so libFuzzer saves the input.
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer", handoffCore]),

        // FrameParser fed in chunks, then PeerMessage(frame:) on every frame.
        .executableTarget(name: "FuzzFrameDecoder", dependencies: ["FuzzSupport", handoffCore]),
        // PropertyListBinaryCoding.decode: the userInfo wire encoding.
        .executableTarget(name: "FuzzUserInfoDecoder", dependencies: ["FuzzSupport", handoffCore]),
        // ActivityAdvertisement(txtRecord:): DNS-SD TXT rdata from any host on the LAN.
        .executableTarget(name: "FuzzTXTParser", dependencies: ["FuzzSupport", handoffCore]),
        // SealedAdvertisement.parse/open: the sealed TXT record of protocol v2.
        .executableTarget(name: "FuzzSealedTXT", dependencies: ["FuzzSupport", handoffTrust]),
        // ConfigurationFile.parse: handoffd's JSON configuration.
        .executableTarget(name: "FuzzConfigParser", dependencies: ["FuzzSupport", handoffCore, handoffConfiguration]),
        // JSONValue(parsing:): the control socket, --user-info, and the configuration file.
        .executableTarget(name: "FuzzJSONParser", dependencies: ["FuzzSupport", handoffCore]),

        // Writes Corpus/<target>/ from the real encoders (not a fuzz target).
        .executableTarget(name: "FuzzSeeds", dependencies: [handoffCore, handoffTrust]),
    ],
    swiftLanguageModes: [.v6]
)
