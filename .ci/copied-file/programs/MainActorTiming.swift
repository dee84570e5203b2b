// The view's timeout with what it needs (`Scripts/vendor --with MainActorTiming`): main-actor code times out
// a load of a model object that is not Sendable, on a clock and on a Dispatch timer.
// Expect: main-actor timing: band 1 in time; timedOut on the main actor
// Expect: main-actor timing on a Dispatch timer: band 2 in time; timedOut on the main actor
import Dispatch

enum LoadError: Error { case timedOut }

final class Band {  // not Sendable, like a Core Data object
  let name: String
  init(name: String) { self.name = name }
}

@MainActor func describe(_ result: Result<Band, LoadError>) -> String {
  switch result {
  case .success(let band): "\(band.name) in time"
  case .failure(let error): "\(error) on the main actor"
  }
}

@MainActor func run() async {
  let never = ResultPromise<Band, LoadError>()  // kept to the end: a dropped pending promise is reported
  let fast = await ResultPromise<Band, LoadError>(value: Band(name: "band 1")).onMainActor
    .timeout(.seconds(60), failure: .timedOut).result
  let slow = await never.onMainActor.timeout(.milliseconds(10), failure: .timedOut).result
  print("main-actor timing: \(describe(fast)); \(describe(slow))")
  let interval: DispatchTimeInterval = .milliseconds(10)  // the form for systems older than iOS 16
  let fastOnDispatch = await ResultPromise<Band, LoadError>(value: Band(name: "band 2")).onMainActor
    .timeout(.seconds(60) as DispatchTimeInterval, failure: .timedOut).result
  let slowOnDispatch = await never.onMainActor.timeout(interval, failure: .timedOut).result
  print("main-actor timing on a Dispatch timer: \(describe(fastOnDispatch)); \(describe(slowOnDispatch))")
  never.fail(.timedOut)
  _ = never.onMainActor.settledResult  // heard, so not reported as a failure nobody heard
}

await run()
