// Copied beside every program: waiting for a promise without Swift Concurrency, with the core alone.
import Dispatch

/// Waits for `promise` to settle, and prints `label` with its outcome: the value, or the error's case.
nonisolated func show<Success: Sendable, Failure>(_ label: String, _ promise: ResultPromise<Success, Failure>) {
  let finished = DispatchSemaphore(value: 0)
  promise.await { result in
    switch result {
    case .success(let value): print("\(label) \(value)")
    case .failure(let error): print("\(label) \(error)")
    }
    finished.signal()
  }
  finished.wait()
}
