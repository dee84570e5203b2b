// The core and the main-actor file (`Scripts/vendor --with MainActor`), as app code copies them: a
// main-actor view model whose chain touches its own state and a model object that is not Sendable. Without
// the cancellation file the view's `cancel()` compiles and has nothing to stop.
// Expect: core and main actor: band 7, showing band 7; after cancel(): band 8
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
}

await run()
