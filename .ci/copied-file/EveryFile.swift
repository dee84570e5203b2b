// Uses every source file copied into one target: combinators, timing and Swift Concurrency on the main actor.
import Dispatch

enum LoadError: Error { case offline, timedOut }

@MainActor func run() async {
  let remote = ResultPromise<Int, LoadError> { done in DispatchQueue.global().async { done(.success(40)) } }
  let total = await ResultPromise.all([remote, ResultPromise(value: 2)])
    .onMainActor
    .timeout(.seconds(60), failure: .timedOut)
    .map { $0.reduce(0, +) }
    .result
  print("every file: \((try? total.get()) ?? -1)")
}

await run()
