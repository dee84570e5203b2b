// Uses every source file copied into one target: combinators, timing, cancellation and Swift Concurrency
// on the main actor.
import Dispatch

enum LoadError: Error { case offline, timedOut, cancelled }

@MainActor func run() async {
  let remote = ResultPromise<Int, LoadError> { done in DispatchQueue.global().async { done(.success(40)) } }
  let total = await ResultPromise.all([remote, ResultPromise(value: 2)])
    .onMainActor
    .timeout(.seconds(60), failure: .timedOut)
    .map { $0.reduce(0, +) }
    .result
  // Work that stops when asked, and reports it in its own error type.
  let stoppable = ResultPromise<Int, LoadError> { done, onCancel in
    let work = Task {
      try? await Task.sleep(nanoseconds: 60_000_000_000)
      done(Task.isCancelled ? .failure(.cancelled) : .success(1))
    }
    onCancel { work.cancel() }
  }
  let view = stoppable.onMainActor.map { $0 + 1 }
  view.cancel()
  let stopped = await view.result
  print("every file: \((try? total.get()) ?? -1)\(stopped == .failure(.cancelled) ? "" : " (not stopped)")")
}

await run()
