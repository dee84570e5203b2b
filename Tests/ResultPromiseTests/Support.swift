import Foundation
import ResultPromise
import Synchronization

/// An error type for tests.
enum TestError: Error, Equatable {
  case boom
  case other(Int)
}

/// A second error type, for `mapError` and `recover` across error types.
enum AppError: Error, Equatable {
  case offline
  case wrapped(TestError)
}

/// A thread-safe log of values, in the order they were appended.
final class Log<Value: Sendable>: Sendable {
  private let storage = Mutex<[Value]>([])

  func append(_ value: Value) { storage.withLock { $0.append(value) } }
  var values: [Value] { storage.withLock { $0 } }
  var count: Int { storage.withLock { $0.count } }
}

/// A thread-safe counter.
final class Counter: Sendable {
  private let storage = Atomic<Int>(0)

  func increment() { storage.add(1, ordering: .relaxed) }
  func decrement() { storage.subtract(1, ordering: .relaxed) }
  var value: Int { storage.load(ordering: .relaxed) }
}

/// An object whose lifetime the leak tests watch through `weak` references.
final class Tracked: Sendable {}

/// Runs `body` on a new thread whose stack is `stackSize` bytes (512 KiB unless given) and waits for it.
func onSmallStack(stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    let thread = Thread {
      body()
      continuation.resume()
    }
    thread.stackSize = stackSize
    thread.start()
  }
}

/// An identifier for the current thread, to check where callbacks run.
func currentThreadID() -> ObjectIdentifier {
  ObjectIdentifier(Thread.current)
}

/// Counts every broken-promise report made while the tests run, by message. Tests look up a type name
/// that only they use, because suites run in parallel and share the one global handler.
enum BrokenPromiseReports {
  private static let counts: Mutex<[String: Int]> = {
    PromiseDiagnostics.brokenPromiseHandler = { message in
      BrokenPromiseReports.counts.withLock { $0[message, default: 0] += 1 }
    }
    return Mutex([:])
  }()

  /// Installs the counting handler (once); call before dropping promises that should report.
  static func install() { counts.withLock { _ in } }

  /// The reports so far that mention `marker`, with how often each was made.
  static func mentioning(_ marker: String) -> [String: Int] {
    counts.withLock { $0.filter { $0.key.contains(marker) } }
  }
}
