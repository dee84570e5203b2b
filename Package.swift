// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "ResultPromise",
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
