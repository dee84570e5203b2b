// The core and the main-actor file (`Scripts/vendor --with MainActor`), as app code copies them: a
// main-actor view model whose chain touches its own state and a model object that is not Sendable. Without
// the cancellation file the view's `cancel()` compiles and has nothing to stop.
// Expect: core and main actor: band 7, showing band 7; after cancel(): band 8
// Expect: checked on the main actor: BAND 9, offline; closed; MainActorPromise<Band, LoadError>(pending)
import Dispatch

enum LoadError: Error { case offline }

final class Band {  // not Sendable, like a Core Data object
  var name: String
  init(name: String) { self.name = name }
}

@MainActor final class BandViewModel {
  var status = "loading"

  func load(_ id: Int) -> MainActorPromise<String, LoadError> {
    ResultPromise<Int, LoadError> { done in DispatchQueue.global().async { done(.success(id)) } }
      .onMainActor
      .map { id in Band(name: "band \(id)") }
      .compactMap(else: .offline) { band in band.name.isEmpty ? nil : band }
      .validate(else: .offline) { band in band.name.hasPrefix("band") }
      .then { band in .success(band.name) }
      .onSuccess { name in self.status = "showing \(name)" }
  }
}

@MainActor func run() async {
  let model = BandViewModel()
  let name = await model.load(7).result
  let status = model.status
  let next = model.load(8)
  next.cancel()
  let after = await next.result
  print("core and main actor: \((try? name.get()) ?? "failed"), \(status); after cancel(): \((try? after.get()) ?? "failed")")
  var closed = "open"
  let checked = await model.load(9)
    .map { $0.uppercased() }
    .alwaysAsync { _ in
      closed = "closed"
      return ResultPromise(value: ())
    }
    .result
  let rejected = await model.load(10).validate(else: .offline) { _ in false }.result
  let pending = ResultPromise<Band, LoadError>()
  let described = String(reflecting: pending.onMainActor)
  pending.fail(.offline)
  _ = pending.onMainActor.settledResult  // heard, so not reported as a failure nobody heard
  print("checked on the main actor: \((try? checked.get()) ?? "failed"), \(rejected == .failure(.offline) ? "offline" : "passed"); \(closed); \(described)")
}

await run()
