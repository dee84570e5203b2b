// swift-tools-version: 6.2
// GRDBBands: the library's story over a real database. A main-actor view model loads a band from SQLite
// through GRDB's completion-handler APIs, edits a non-Sendable model object, sends it to a server and
// saves it — one flat chain. An example package of its own, so the library stays free of dependencies.
//
//   swift run --package-path Examples/GRDBBands GRDBBands                 # success; exits 0
//   swift run --package-path Examples/GRDBBands GRDBBands --fail-at save  # injected failure; exits 1
//   swift run --package-path Examples/GRDBBands GRDBBands --cancel        # stops a query and a request
import PackageDescription

import struct Foundation.URL

// SwiftPM names a path dependency after its folder, which is whatever the checkout is called.
let library = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
  name: "GRDBBands",
  platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v7)],
  dependencies: [
    .package(path: library.path),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
  ],
  targets: [
    .executableTarget(
      name: "GRDBBands",
      dependencies: [
        .product(name: "ResultPromise", package: library.lastPathComponent.lowercased()),
        .product(name: "GRDB", package: "GRDB.swift"),
      ],
      // Xcode 26's settings for a new app: main-actor code by default.
      swiftSettings: [
        .defaultIsolation(MainActor.self),
        .enableUpcomingFeature("InferIsolatedConformances"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
