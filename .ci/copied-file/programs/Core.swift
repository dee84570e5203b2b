// The core file alone (`Scripts/vendor`): a chain across threads, waited for without Swift Concurrency.
// Expect: core alone: 42
import Dispatch

enum LoadError: Error { case offline }

let finished = DispatchSemaphore(value: 0)
ResultPromise<Int, LoadError> { done in DispatchQueue.global().async { done(.success(20)) } }
  .then { .success($0 + 1) }
  .thenAsync { value in ResultPromise { done in DispatchQueue.global().async { done(.success(value * 2)) } } }
  .map { "core alone: \($0)" }
  .mapError { _ in LoadError.offline }
  .await { result in
    print((try? result.get()) ?? "failed")
    finished.signal()
  }
finished.wait()
