// What both sides share: the completion-handler API, the synchronous step, the consumer.
import Dispatch
import Synchronization

enum E: Error, Sendable { case failed, cancelled }

/// The completion-handler API every scenario bridges: it calls back on another thread (a global queue).
@inline(never) func api(_ x: Int, completion: @escaping @Sendable (Result<Int, E>) -> Void) {
  DispatchQueue.global().async { completion(.success(x &+ 1)) }
}

/// The same API, wrapped once for async/await as an app would: `func load() async throws -> Int`.
func apiAsync(_ x: Int) async throws -> Int {
  try await withCheckedThrowingContinuation { c in api(x) { c.resume(with: $0) } }
}

/// The same, with an unsafe continuation (no misuse checks, no canary allocation).
func apiAsyncUnsafe(_ x: Int) async throws -> Int {
  try await withUnsafeThrowingContinuation { c in api(x) { c.resume(with: $0) } }
}

/// The synchronous value transform, opaque to both sides (neither can fold k steps into one add).
@inline(never) func step(_ x: Int) -> Int { x &+ 3 }

/// 0, opaquely: lets a closure capture a per-waiter value without changing what it delivers.
@inline(never) func zero(_ i: Int) -> Int { i &* 0 }

@inline(__always) func val(_ r: Result<Int, E>) -> Int {
  if case .success(let v) = r { return v } else { return -1 }
}

/// The consumer both sides deliver to. `arm(n)`, start the work, `wait()` for n deliveries.
final class Sink: @unchecked Sendable {
  let remaining = Atomic<Int>(0)
  let total = Atomic<Int>(0)
  let sem = DispatchSemaphore(value: 0)
  init() {}
  func arm(_ n: Int) { remaining.store(n, ordering: .releasing) }
  @inline(never) func deliver(_ v: Int) {
    total.wrappingAdd(v, ordering: .relaxed)
    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { sem.signal() }
  }
  /// For consumers inside a task that need no wake-up (scenario A2).
  @inline(never) func add(_ v: Int) { total.wrappingAdd(v, ordering: .relaxed) }
  func wait() { sem.wait() }
  func wait(seconds: Double) -> Bool { sem.wait(timeout: .now() + seconds) == .success }
}

let sink = Sink()
let started = Sink()

/// Runs `body` in one task and blocks the calling thread until it ends.
func runInTask(_ body: @escaping @Sendable () async -> Void) {
  let done = DispatchSemaphore(value: 0)
  Task {
    await body()
    done.signal()
  }
  done.wait()
}

/// Set once per scenario E operation by the load's start, used by the driver: one thread.
final class LoadSlot: @unchecked Sendable {
  var done: (@Sendable (Result<Int, E>) -> Void)?
}
