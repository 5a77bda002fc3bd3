// Micro benchmarks of HandoffCore's pure coding paths: frames (Frame.bytes, FrameParser), the
// binary property-list userInfo coding, and the DNS-SD TXT record (ActivityAdvertisement).
//
// Each benchmark iteration is one operation, so mallocCountTotal reads as "mallocs per op".
// Names have no spaces or slashes: benchmark 1.38.1 writes threshold files with "_" for those
// characters but looks them up by the raw name, so such names never match their thresholds.

import Benchmark
import HandoffTestSupport
import HandoffCore

/// Tolerances for `swift package benchmark thresholds check` (compared at p90 with the files in
/// Thresholds/). Malloc counts are deterministic and must not change at all. Times are not: on a
/// shared 2-core machine they swing by more than 2x within minutes as other builds come and go,
/// so only a 4x slowdown fails (tighten these on a dedicated benchmark machine).
func coreThresholds() -> [BenchmarkMetric: BenchmarkThresholds] {
    [
        .wallClock: .init(relative: [.p90: 300.0]),  // fails at 4x slower
        .throughput: .init(relative: [.p90: 300.0]),  // (wall clock covers slowdowns)
        .mallocCountTotal: .init(absolute: [.p90: 0]),
    ]
}

func coreConfiguration() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 100,
        maxDuration: .seconds(1),
        maxIterations: 100_000,
        thresholds: coreThresholds()
    )
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = coreConfiguration()

    let userInfo = BenchmarkFixtures.userInfo()
    let userInfoBytes = PropertyListBinaryCoding.encode(userInfo)
    let userInfoFrame = Frame(kind: .userInfo, payload: userInfoBytes)
    let userInfoFrameBytes = userInfoFrame.bytes
    let limits = FrameLimits(maxUserInfoBytes: 3072)
    precondition(userInfoBytes.count <= 3072 && userInfoBytes.count > 2900, "fixture must be ~3 KB: \(userInfoBytes.count)")

    // MARK: Frames

    Benchmark("Frame.bytes-encode-3KB-userInfo-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(userInfoFrame.bytes)
        }
    }

    Benchmark("FrameParser-decode-3KB-userInfo-frame") { benchmark in
        for _ in benchmark.scaledIterations {
            var parser = FrameParser(limits: limits)
            parser.append(userInfoFrameBytes)
            blackHole(try parser.next())
        }
    }

    // MARK: userInfo (PropertyListBinaryCoding)

    Benchmark("userInfo-encode-3KB-mixed-types") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(PropertyListBinaryCoding.encode(userInfo))
        }
    }

    Benchmark("userInfo-decode-3KB-mixed-types") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try PropertyListBinaryCoding.decodeUserInfo(userInfoBytes))
        }
    }

    // MARK: TXT record (ActivityAdvertisement)

    let advertisement = BenchmarkFixtures.advertisement()
    let txt = advertisement.txtRecord

    Benchmark("TXT-build-current-activity-40-char-title") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(advertisement.txtRecord)
        }
    }

    Benchmark("TXT-parse-current-activity-40-char-title") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ActivityAdvertisement(txtRecord: txt))
        }
    }
}
