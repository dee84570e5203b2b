// Runs the view model once, as an app would from a button:
//   GRDBBands [--fail-at migrate|fetch|update|save]
// Prints what the screen would show; exits 0 if the band was saved with its alias, 1 otherwise.
//   GRDBBands --cancel
// Cancels a slow query and an unanswered HTTP request (Cancelling.swift); exits 0 if both stopped early.

import Dispatch
import Foundation
import ResultPromise

let arguments = CommandLine.arguments
var failAt: Step?
if let flag = arguments.firstIndex(of: "--fail-at") {
  guard flag + 1 < arguments.count, let step = Step(rawValue: arguments[flag + 1]) else {
    print("usage: GRDBBands [--fail-at \(Step.allCases.map(\.rawValue).joined(separator: "|"))]")
    exit(2)
  }
  failAt = step
}

let database = try BandDatabase(failAt: failAt)
if arguments.contains("--cancel") {
  demonstrateCancellation(database: database)
  dispatchMain()
}
let model = BandsViewModel(database: database, server: BandServer(failAt: failAt))
model.addAlias("The Quarrymen", toBand: 1).onMainActor.await { result in
  print(model.status)
  if let band = model.band {
    print("on screen: \(band.name), also known as \(band.otherNames), revision \(band.revision)")
  }
  let stored = try? database.stored(id: 1)
  print("in the database: \(stored.map { "\($0.name) [\($0.otherNames)] r\($0.revision)" } ?? "nothing")")
  exit(stored?.otherNames == "The Quarrymen" && stored?.revision == 1 ? 0 : 1)
}
// Runs the main queue; the chain's main-actor closures hop to it from GRDB's and the server's queues.
dispatchMain()
