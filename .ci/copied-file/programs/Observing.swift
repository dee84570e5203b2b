// The core and the observing file (`Scripts/vendor --with Observing`): one side of the outcome, either
// outcome, and the outcome now. Settled promises call back at once, on this thread, in this order.
// Expect: observing: success 42
// Expect: observing: failure offline
// Expect: observing: always success(7)
// Expect: observing: settled 42, pending nil
// Expect: observing: setFailureType 5

enum LoadError: Error { case offline }

let loaded = ResultPromise<Int, LoadError>(value: 42)
loaded.onSuccess { print("observing: success \($0)") }.onFailure { _ in print("observing: not a failure") }
ResultPromise<Int, LoadError>(error: .offline).onFailure { print("observing: failure \($0)") }
let later = ResultPromise<Int, LoadError>()
later.always { print("observing: always \($0)") }
later.succeed(7)
if case .success(let value)? = loaded.settledResult, ResultPromise<Int, LoadError>().settledResult == nil {
  print("observing: settled \(value), pending nil")
}
let typed: ResultPromise<Int, LoadError> = ResultPromise<Int, Never>(value: 5).setFailureType(to: LoadError.self)
typed.onSuccess { print("observing: setFailureType \($0)") }
