// swift-tools-version: 6.2
// BandsApp: a main-actor view model over a persistence layer whose objects are not Sendable, using
// ResultPromise the way app code does. CI builds and runs it in five language settings; pick one with
// RESULTPROMISE_MODE (default `app6`):
//
//   swift5           Swift 5 language mode
//   swift5-complete  Swift 5 with complete concurrency checking
//   swift6           Swift 6 language mode
//   app5, app6       Xcode 26's new-app settings — default isolation MainActor and approachable
//                    concurrency — in Swift 5 and Swift 6 mode
//
//   RESULTPROMISE_MODE=app6 swift run --package-path Examples/BandsApp BandsApp
import PackageDescription

import class Foundation.ProcessInfo
import struct Foundation.URL

// SwiftPM names a path dependency after its folder, which is whatever the checkout is called.
let library = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let libraryIdentity = library.lastPathComponent.lowercased()

/// What Xcode 26's "Approachable Concurrency" turns on; Swift 6 mode already has the rest.
let approachable: [SwiftSetting] = [
  .enableUpcomingFeature("InferIsolatedConformances"),
  .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]
let approachableInSwift5: [SwiftSetting] =
  approachable + [
    .enableUpcomingFeature("DisableOutwardActorInference"),
    .enableUpcomingFeature("GlobalActorIsolatedTypesUsability"),
    .enableUpcomingFeature("InferSendableFromCaptures"),
  ]

let mode = ProcessInfo.processInfo.environment["RESULTPROMISE_MODE"] ?? "app6"
/// Settings for every target, and the extra ones for app code (the persistence layer stands for a
/// framework such as Core Data, which keeps its own, nonisolated, defaults).
let (languageMode, common, appOnly): (SwiftLanguageMode, [SwiftSetting], [SwiftSetting]) =
  switch mode {
  case "swift5": (.v5, [], [])
  case "swift5-complete": (.v5, [.enableExperimentalFeature("StrictConcurrency")], [])
  case "swift6": (.v6, [], [])
  case "app5": (.v5, approachableInSwift5, [.defaultIsolation(MainActor.self)])
  case "app6": (.v6, approachable, [.defaultIsolation(MainActor.self)])
  default: fatalError("RESULTPROMISE_MODE must be swift5, swift5-complete, swift6, app5 or app6, not \(mode)")
  }

let package = Package(
  name: "BandsApp",
  // The library's minimums are lower; this app gives up on a slow server with `timeout`, which needs these.
  platforms: [.iOS(.v16), .macOS(.v13), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  dependencies: [.package(path: library.path)],
  targets: [
    .target(
      name: "BandStore",
      dependencies: [.product(name: "ResultPromise", package: libraryIdentity)],
      swiftSettings: common
    ),
    .executableTarget(
      name: "BandsApp",
      dependencies: ["BandStore", .product(name: "ResultPromise", package: libraryIdentity)],
      swiftSettings: common + appOnly
    ),
  ],
  swiftLanguageModes: [languageMode]
)
