// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "ResultPromise",
  // Swift Concurrency's minimums. APIs that need newer systems (those taking a `Duration`) say so with
  // `@available`; the core file alone (ResultPromise.swift) needs nothing newer than SwiftPM's defaults.
  platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
  products: [
    .library(name: "ResultPromise", targets: ["ResultPromise"])
  ],
  targets: [
    .target(name: "ResultPromise"),
    .executableTarget(
      name: "CacheExample",
      dependencies: ["ResultPromise"],
      path: "Examples/CacheExample"
    ),
    .testTarget(name: "ResultPromiseTests", dependencies: ["ResultPromise"]),
  ],
  swiftLanguageModes: [.v6]
)
