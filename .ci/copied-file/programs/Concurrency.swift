// The concurrency file with what it needs (`Scripts/vendor --with Concurrency`): awaiting promises, a
// promise from async work, the main-actor view's awaiting and its cancel() reaching the work.
// Expect: concurrency: 42, view 43, abandoned CancellationError, view's cancel() stopped the task
enum LoadError: Error { case offline, cancelled }

@MainActor func run() async {
  let answer = ResultPromise<Int, LoadError> { () async throws(LoadError) -> Int in 42 }
  let value = (try? await answer.value) ?? -1
  let view = await answer.onMainActor.map { $0 + 1 }.result
  let pending = ResultPromise<Int, LoadError>()
  let waiter = Task { try await pending.valueAbandoningOnCancel() }
  waiter.cancel()
  var abandoned = "not abandoned"
  do { _ = try await waiter.value } catch { abandoned = "\(type(of: error))" }
  pending.succeed(0)  // a pending promise dropped would be reported
  let work = ResultPromise<Int, LoadError> { () async throws(LoadError) -> Int in
    try? await Task.sleep(nanoseconds: 60_000_000_000)
    if Task.isCancelled { throw .cancelled }
    return 0
  }
  let stoppable = work.onMainActor.map { $0 + 1 }
  stoppable.cancel()
  let stopped = await stoppable.result == .failure(.cancelled) ? "stopped the task" : "did not stop the task"
  print("concurrency: \(value), view \((try? view.get()) ?? -1), abandoned \(abandoned), view's cancel() \(stopped)")
}

await run()
