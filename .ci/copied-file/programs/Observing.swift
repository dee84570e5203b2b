// The core and the observing file (`Scripts/vendor --with Observing`): one side of the outcome, either
// outcome, and the outcome now. Settled promises call back at once, on this thread, in this order.
// Expect: observing: success 42
// Expect: observing: failure offline
// Expect: observing: always success(7)
// Expect: observing: settled 42, pending nil
// Expect: observing: setFailureType 5
// Expect: observing: validate and compactMap 42
// Expect: observing: not valid offline
// Expect: observing: nil offline
// Expect: observing: cleanup runs
// Expect: observing: alwaysAsync 42
// Expect: observing: catching 7
// Expect: observing: thrown offline

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
show("observing: validate and compactMap", loaded.validate(else: .offline) { $0 > 0 }.compactMap(else: .offline) { $0 })
show("observing: not valid", loaded.validate(else: .offline) { $0 < 0 })
show("observing: nil", loaded.compactMap(else: .offline) { _ -> Int? in nil })
let cleanup = ResultPromise<Void, Never>()
let cleaned = loaded.alwaysAsync { _ in
  print("observing: cleanup runs")
  return cleanup
}
cleanup.succeed(())
show("observing: alwaysAsync", cleaned)
show("observing: catching", ResultPromise(catching: { () throws(LoadError) -> Int in 7 }))
show("observing: thrown", ResultPromise(catching: { () throws(LoadError) -> Int in throw .offline }))
