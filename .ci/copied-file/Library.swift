// A library that vendors a private copy of ResultPromise (`Scripts/vendor --internal …`): it uses
// promises inside, and its public API shows none. LIBRARY is replaced by the library's name.
import Dispatch

public enum LIBRARYError: Error { case offline }

public enum LIBRARY {
  /// Loads a name, through the library's own promises.
  public static func load(_ id: Int, completion: @escaping @Sendable (Result<String, LIBRARYError>) -> Void) {
    ResultPromise<Int, LIBRARYError> { done in DispatchQueue.global().async { done(.success(id)) } }
      .then { .success($0 * 10) }
      .map { "LIBRARY \($0)" }
      .await(completion)
  }

  /// Counts broken-promise reports made by this library's copy, which has a hook of its own.
  public static func countBrokenPromises() -> @Sendable () -> Int {
    let counter = Counter()
    PromiseDiagnostics.brokenPromiseHandler = { _ in counter.add() }
    return { counter.value }
  }

  /// Drops a pending promise with an observer waiting: one report through this library's hook.
  public static func dropPendingPromise() {
    ResultPromise<Int, LIBRARYError>().await { _ in }
  }
}

final class Counter: @unchecked Sendable {
  // @unchecked Sendable: `count` is only touched under `lock`.
  private let lock = DispatchSemaphore(value: 1)
  private var count = 0
  func add() {
    lock.wait()
    count += 1
    lock.signal()
  }
  var value: Int {
    lock.wait()
    defer { lock.signal() }
    return count
  }
}
