// Runs the view model once, as an app would from a button: `BandsApp [--fail-at bootstrap|fetch|update|save]`.
// Prints what the screen would show; exits 0 if the band was saved with its new name, 1 otherwise.

import BandStore
import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The step to fail at, from `--fail-at STEP`; exits with status 2 on a bad argument.
func failureStep(in arguments: [String]) -> Step? {
  guard let flag = arguments.firstIndex(of: "--fail-at") else { return nil }
  guard flag + 1 < arguments.count, let step = Step(rawValue: arguments[flag + 1]) else {
    print("usage: BandsApp [--fail-at \(Step.allCases.map(\.rawValue).joined(separator: "|"))]")
    exit(2)
  }
  return step
}

let failAt = failureStep(in: CommandLine.arguments)
// App code starts on the main actor (in an app, from a button or `.task`); here, from a main-actor task.
Task { @MainActor in
  let model = BandsViewModel(failAt: failAt)
  model.addAlias("The Quarrymen", toBand: 1) {
    print(model.status)
    if let band = model.band {
      print("band \(band.id): \(band.name), also known as \(band.otherNames), revision \(band.revision)")
    }
    exit(model.status.hasPrefix("saved") ? 0 : 1)
  }
}
// Runs the main queue; the chain's closures hop to it from the disk's and the server's queues.
dispatchMain()
