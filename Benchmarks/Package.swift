// swift-tools-version: 6.1
// The benchmark package: ResultPromise side by side with swift-nio, OpenCombine, Swift Concurrency and
// a floor, in one run. Its own package, so that the library itself stays free of dependencies.
//
//   cd Benchmarks && swift package --disable-sandbox benchmark
import PackageDescription

import class Foundation.ProcessInfo
import struct Foundation.URL

// SwiftPM names a path dependency after its folder, which is whatever the checkout is called.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let libraryIdentity = library.lastPathComponent.lowercased()

let package = Package(
  name: "ResultPromiseBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [
    .package(path: ".."),
    .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
  ],
  targets: [
    // The ResultPromise and swift-nio workloads that both runs time.
    .target(
      name: "Workloads",
      dependencies: [
        .product(name: "ResultPromise", package: libraryIdentity),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ]
    ),
    // Timing in a fresh process per contender and round, without package-benchmark's malloc interposer.
    // Not under Benchmarks/, where package-benchmark would take it for one of its own.
    .executableTarget(name: "FreshProcess", dependencies: ["Workloads"]),
    // What callers who leave a shared promise cost: memory left behind, and instructions and mallocs per call.
    .executableTarget(
      name: "Departures", dependencies: [.product(name: "ResultPromise", package: libraryIdentity)]),
    // ResultPromise beside plain Swift Concurrency on the same jobs: tasks that await promises, main-actor
    // steps, shared loads; fresh processes, mallocs counted (`Scripts/async-await`).
    .executableTarget(
      name: "AsyncAwait", dependencies: [.product(name: "ResultPromise", package: libraryIdentity)]),
    .executableTarget(
      name: "PromiseBenchmarks",
      dependencies: [
        "Workloads",
        .product(name: "ResultPromise", package: libraryIdentity),
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "OpenCombine", package: "OpenCombine"),
      ],
      path: "Benchmarks/PromiseBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
  ],
  swiftLanguageModes: [.v6]
)
