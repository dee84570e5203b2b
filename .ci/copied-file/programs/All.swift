// Every file (`Scripts/vendor --all`) in one target: combinators, timing, cancellation and Swift Concurrency
// on the main actor.
// Expect: every file: 42
import Dispatch

enum LoadError: Error { case offline, timedOut, cancelled }

@MainActor func run() async {
  let remote = ResultPromise<Int, LoadError> { done in DispatchQueue.global().async { done(.success(40)) } }
  let total = await ResultPromise.all([remote, ResultPromise(value: 2)])
    .onMainActor
    .timeout(.seconds(60), failure: .timedOut)
    .map { $0.reduce(0, +) }
    .result
  let view = stoppable(reporting: LoadError.cancelled).onMainActor.map { $0 + 1 }
  view.cancel()
  let stopped = await view.result
  // A chain that starts at a value reaches the work its thenAsync step adopts (in a copy too, where the
  // cancellation file gives every adopting step a record).
  let adopted = ResultPromise<Int, LoadError>(value: 1)
    .thenAsync { _ in stoppable(reporting: LoadError.cancelled) }
    .map { $0 + 1 }
  adopted.cancel()
  let reached = await adopted.result
  let notes = (stopped == .failure(.cancelled) ? "" : " (not stopped)")
    + (reached == .failure(.cancelled) ? "" : " (not reached)")
  print("every file: \((try? total.get()) ?? -1)\(notes)")
}

await run()
