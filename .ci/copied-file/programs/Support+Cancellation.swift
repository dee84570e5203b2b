// Copied beside every program whose copy has the cancellation file: work that stops when asked.

/// Work that would take a minute, and that stops when asked, failing with `stopped`.
nonisolated func stoppable<Failure: Error>(reporting stopped: Failure) -> ResultPromise<Int, Failure> {
  ResultPromise { done, onCancel in
    let work = Task {
      try? await Task.sleep(nanoseconds: 60_000_000_000)
      done(Task.isCancelled ? .failure(stopped) : .success(1))
    }
    onCancel { work.cancel() }
  }
}
