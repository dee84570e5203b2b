import Foundation
import ResultPromise
import Synchronization
import Testing

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

/// A value guarded by a lock: the tests' `Mutex`. Not `Synchronization.Mutex`, whose lock ThreadSanitizer
/// cannot see into (it is prebuilt, and on Linux waits on a futex), so that it reported the state it guards
/// as raced; `NSLock` is a pthread mutex, which ThreadSanitizer understands.
///
/// `@unchecked Sendable`: `value` is only read and written while `lock` is held.
final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// A thread-safe log of values, in the order they were appended.
final class Log<Value: Sendable>: Sendable {
  private let storage = Locked<[Value]>([])

  func append(_ value: Value) { storage.withLock { $0.append(value) } }
  var values: [Value] { storage.withLock { $0 } }
  var count: Int { storage.withLock { $0.count } }
}

/// A thread-safe counter.
final class Counter: Sendable {
  private let storage = Atomic<Int>(0)

  func increment() { storage.add(1, ordering: .relaxed) }
  func add(_ amount: Int) { storage.add(amount, ordering: .relaxed) }
  func decrement() { storage.subtract(1, ordering: .relaxed) }
  var value: Int { storage.load(ordering: .relaxed) }
}

/// An object whose lifetime the leak tests watch through `weak` references.
final class Tracked: Sendable {}

#if canImport(Glibc)
  /// glibc's `malloc_trim` (its header is not part of the Glibc module): returns free heap to the system.
  @_silgen_name("malloc_trim") func mallocTrim(_ pad: Int) -> Int32
#endif

/// Runs `body` on a new thread whose stack is `stackSize` bytes (512 KiB unless given) and waits for it.
///
/// A long-chain test frees hundreds of megabytes when it ends. glibc keeps what a thread freed in that
/// thread's heap arena, and each new thread may get an arena of its own, so without a trim the test
/// process grows by that much for every such test it has run (to 8 GB, measured).
func onSmallStack(stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> Void) async {
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    let thread = Thread {
      body()
      #if canImport(Glibc)
        _ = mallocTrim(0)
      #endif
      continuation.resume()
    }
    thread.stackSize = stackSize
    thread.start()
  }
}

/// Starts `body` on a new thread of its own, and returns at once: for tests that block a thread on a
/// semaphore, which must not hold one of Swift's shared threads.
func onNewThread(_ body: @escaping @Sendable () -> Void) {
  Thread(block: body).start()
}

/// An identifier for the current thread, to check where callbacks run.
func currentThreadID() -> ObjectIdentifier {
  ObjectIdentifier(Thread.current)
}

/// Counts every broken-promise report made while the tests run, by message. Tests look up a type name
/// that only they use, because suites run in parallel and share the one global handler.
enum BrokenPromiseReports {
  private static let counts: Locked<[String: Int]> = {
    PromiseDiagnostics.brokenPromiseHandler = { message in
      BrokenPromiseReports.counts.withLock { $0[message, default: 0] += 1 }
    }
    return Locked([:])
  }()

  /// Installs the counting handler (once); call before dropping promises that should report.
  static func install() { counts.withLock { _ in } }

  /// The reports so far that mention `marker`, with how often each was made.
  static func mentioning(_ marker: String) -> [String: Int] {
    counts.withLock { $0.filter { $0.key.contains(marker) } }
  }
}

/// A failure a test drops on purpose, tagged with a name only that test uses (suites run in parallel).
struct Dropped: Error, Equatable {
  let tag: String
  init(_ tag: String) { self.tag = tag }
}

/// Records the reports of failures nobody heard whose error is a `Dropped`, by tag, instead of printing them.
/// Any other report is written to standard error, as the default handler does, so that `swift test` shows a
/// failure a test dropped by mistake (and CI fails on it).
enum UnheardFailures {
  private static let reports: Locked<[String: [String]]> = {
    PromiseDiagnostics.unheardFailureHandler = { error, message in
      guard let dropped = error as? Dropped else { return PromiseDiagnostics.writeToStandardError(message) }
      UnheardFailures.reports.withLock { $0[dropped.tag, default: []].append(message) }
      // What a handler that uploads reports through the app's own promises may do (ReportPlaceTests): drop a
      // failing promise on this thread, or on another while this one waits.
      if dropped.tag.hasPrefix("nest.") {
        _ = ResultPromise<Int, Dropped>(error: Dropped("nested.\(dropped.tag)"))
      }
      if dropped.tag.hasPrefix("other.") {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
          _ = ResultPromise<Int, Dropped>(error: Dropped("elsewhere.\(dropped.tag)"))
          done.signal()
        }
        done.wait()
      }
    }
    return Locked([:])
  }()

  /// Installs the recording handler (once); call before dropping a `Dropped` failure.
  static func install() { reports.withLock { _ in } }

  /// The reports so far of failures tagged `tag`, in the order they were made.
  static func messages(_ tag: String) -> [String] { reports.withLock { $0[tag] ?? [] } }
}

/// A clock that moves only when a test advances it, so timing tests wait for nothing real.
///
/// `sleep(until:)` returns once `advance(by:)` has reached the deadline (at once if it has passed), and
/// throws `CancellationError` if its task is cancelled first. `sleepers` counts the sleeps under way.
final class ManualClock: Clock {
  struct Instant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (left: Instant, right: Instant) -> Bool { left.offset < right.offset }
  }

  private struct Sleeper {
    let id: Int
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var sleepers: [Sleeper] = []
    var nextID = 0
    var cancelled: Set<Int> = []
  }

  private let state = Locked(State())

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }
  var sleepers: Int { state.withLock { $0.sleepers.count } }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let outcome: Result<Void, any Error>? = state.withLock { state in
          if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
          if deadline <= state.now { return .success(()) }
          state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
          return nil
        }
        if let outcome { continuation.resume(with: outcome) }
      }
    } onCancel: {
      let sleeper: Sleeper? = state.withLock { state in
        guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
          state.cancelled.insert(id)  // not asleep yet: it throws when it gets there
          return nil
        }
        return state.sleepers.remove(at: index)
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time on by `duration` and wakes every sleep whose deadline has come.
  func advance(by duration: Duration) {
    let due: [Sleeper] = state.withLock { state in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      defer { state.sleepers.removeAll { $0.deadline <= now } }
      return state.sleepers.filter { $0.deadline <= now }
    }
    for sleeper in due { sleeper.continuation.resume() }
  }
}

/// A manual clock whose sleeps, once `advance(by:)` has reached their deadline, wait at a gate until
/// `open()`: a timer past its deadline that has not gone on yet. `woken` counts the sleeps at the gate
/// or through it. The gate ignores cancellation, as a task that is slow to be scheduled would.
final class GatedClock: Clock {
  typealias Instant = ManualClock.Instant
  let manual = ManualClock()
  private let gate = Locked<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
  private let wokenCount = Counter()

  var now: Instant { manual.now }
  var minimumResolution: Duration { .zero }
  var woken: Int { wokenCount.value }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try await manual.sleep(until: deadline, tolerance: tolerance)
    wokenCount.increment()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let isOpen = gate.withLock { gate in
        if !gate.isOpen { gate.waiting.append(continuation) }
        return gate.isOpen
      }
      if isOpen { continuation.resume() }
    }
  }

  /// Lets every sleep at the gate, and every later one, go on.
  func open() {
    let waiting = gate.withLock { gate in
      gate.isOpen = true
      defer { gate.waiting = [] }
      return gate.waiting
    }
    for continuation in waiting { continuation.resume() }
  }
}

/// A clock whose every sleep fails at once with `error`, and counts the sleeps begun.
final class FailingClock: Clock {
  typealias Instant = ManualClock.Instant
  let error: any Error
  private let sleepCount = Counter()
  init(throwing error: any Error) { self.error = error }

  var now: Instant { Instant(offset: .zero) }
  var minimumResolution: Duration { .zero }
  var sleeps: Int { sleepCount.value }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    sleepCount.increment()
    throw error
  }
}

/// Lets other tasks run until `condition` holds: yields, never sleeps, so it returns as soon as the
/// condition does. Fails the test if that takes over two minutes (the main actor may be busy with other
/// suites for a while; under a sanitizer, on two cores with CI's other checks beside, a timer's task once
/// waited over a minute to run).
func eventually(
  _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
  _ condition: @Sendable () -> Bool
) async {
  let clock = ContinuousClock()
  let deadline = clock.now + .seconds(120)
  while !condition() && clock.now < deadline { await Task.yield() }
  #expect(condition(), comment, sourceLocation: sourceLocation)
}

/// Blocks this thread, in steps of a millisecond, until `condition` holds or `milliseconds` have passed;
/// returns whether it holds. Only for threads of a test's own (`onSmallStack`), never Swift's shared pool,
/// whose threads the awaited work may need.
@discardableResult func blockUntil(milliseconds: Int, _ condition: () -> Bool) -> Bool {
  for _ in 0..<milliseconds where !condition() { Thread.sleep(forTimeInterval: 0.001) }
  return condition()
}

/// Watches an object's lifetime from any task, for tests that wait for a release.
final class Watched: Sendable {
  private weak let object: (AnyObject & Sendable)?
  init(_ object: AnyObject & Sendable) { self.object = object }
  var isReleased: Bool { object == nil }
}

/// The suites whose tests build long chains, cascades and combinators: `length` steps or inputs each.
///
/// `length` is 20,000 in a plain `swift test`, 100,000 when the environment sets `RESULTPROMISE_FULL_SIZE=1`,
/// and 1,000,000 when it sets `RESULTPROMISE_MILLION_STEPS=1` (CI does, in its optimised run, where a million
/// steps take about a second; in a debug build they take minutes). 20,000 proves constant stack depth as
/// well as a million does: these tests run on a 512 KiB stack,
/// where anything recursive — a stack frame per step, observer or release — overflows within a few
/// thousand steps: the naive 40-line promise, whose `fulfil` runs its observers directly, overflowed it
/// at 925 steps built for debugging and at 3,051 built optimised (Swift 6.3.1, Linux x86_64).
///
/// At a million steps the chains take hundreds of megabytes, so the suites run one at a time
/// (`.serialized` applies to the nested suites too), within a laptop's memory.
@Suite(.serialized) enum LongChains {
  static let length =
    ProcessInfo.processInfo.environment["RESULTPROMISE_MILLION_STEPS"] == "1"
    ? 1_000_000 : TestSize.of(full: 100_000, quick: 20_000)
}

/// How large the long, many-caller and many-trial tests run. A plain `swift test` — a newcomer's first minute
/// — runs them at a size that still fails on what they guard: recursion overflows a 512 KiB stack within a
/// few thousand steps, a registration left behind shows in the count of one caller's reports, and each race
/// the stress trials guard was hit in most of a few hundred trials. `.ci/run` sets `RESULTPROMISE_FULL_SIZE=1`
/// for every run, at the sizes CI has always used.
enum TestSize {
  static let isFull = ProcessInfo.processInfo.environment["RESULTPROMISE_FULL_SIZE"] == "1"

  /// `full` where CI runs the suite, `quick` in a plain `swift test`.
  static func of(full: Int, quick: Int) -> Int { isFull ? full : quick }
}

/// The static type of `value`, to check what an expression's type was inferred as (`type(of:)` gives the
/// dynamic type, which for a pending chained promise is a library-internal subclass).
func staticType<T>(of value: T) -> T.Type { T.self }
