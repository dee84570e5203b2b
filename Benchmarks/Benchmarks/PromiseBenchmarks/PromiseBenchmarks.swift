// ResultPromise side by side with swift-nio's EventLoopFuture, OpenCombine's Future, plain Swift
// Concurrency and a floor, in one run. Scenarios S1–S9 are described in the README's Performance
// section; every contender does the same `n` steps per iteration, so ns per step = µs per iteration
// × 1000 / n.
import Benchmark
import Dispatch
import NIOCore
import NIOEmbedded
import NIOPosix
import OpenCombine
import ResultPromise
import Synchronization
import Workloads

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Steps per iteration for OpenCombine chains on a pending root: its `Future` delivers recursively, so a
/// chain of `n` overflows the stack (see the README).
let combineChain = 1_000

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = Metrics.configuration(maxIterations: 30)
  chainOnPendingRoot()
  chainOnSettledRoot()
  thenAsyncChain()
  fanOut()
  allOfMany()
  memoryPerPromise()
  longestChain()
  crossThread()
  cancellableChain()
}

// MARK: - Registering contenders

/// What every benchmark records: wall clock and malloc count. `RESULTPROMISE_BENCH_MALLOC_ONLY=1` (used
/// by CI) keeps only the malloc count, which is deterministic.
enum Metrics {
  static let mallocOnly = getenv("RESULTPROMISE_BENCH_MALLOC_ONLY") != nil
  static let selected: [BenchmarkMetric] = mallocOnly ? [.mallocCountTotal] : [.wallClock, .mallocCountTotal]

  /// The configuration of every benchmark, plus `extra` metrics. The malloc threshold allows a few
  /// allocations for the runtime's own bookkeeping, so that one more per step (100,000 or more per
  /// iteration) fails the check.
  static func configuration(maxIterations: Int, extra: [BenchmarkMetric] = []) -> Benchmark.Configuration {
    .init(
      metrics: selected + (mallocOnly ? [] : extra), timeUnits: .microseconds, warmupIterations: 1,
      maxDuration: .seconds(2), maxIterations: maxIterations,
      thresholds: [.mallocCountTotal: .init(absolute: [.p90: 4])])
  }
}

/// Registers `contender` in `scenario`; `iteration` does one iteration's work.
func contender(
  _ scenario: String, _ contender: String,
  configuration: Benchmark.Configuration = Benchmark.defaultConfiguration,
  iteration: @escaping (Benchmark) -> Void
) {
  Benchmark(label(scenario, contender), configuration: configuration) { benchmark in
    for _ in benchmark.scaledIterations { iteration(benchmark) }
  }
}

/// Registers the ResultPromise and swift-nio contenders of `scenario`, from the workloads the fresh-process
/// run times too.
func sharedContenders(_ scenario: String) {
  for workload in timedWorkloads() where workload.scenario == scenario {
    contender(scenario, workload.contender) { benchmark in
      let timed = workload.prepare()
      benchmark.startMeasurement()
      timed()
    }
  }
}

/// Registers an `async` contender in `scenario`; `iteration` does one iteration's work.
func contender(_ scenario: String, _ contender: String, iteration: @escaping () async -> Void) {
  Benchmark(label(scenario, contender)) { benchmark in
    for _ in benchmark.scaledIterations { await iteration() }
  }
}

/// A benchmark's name: `scenario:contender` without spaces, because package-benchmark's threshold
/// check looks files up by the raw name while it writes them with spaces replaced.
func label(_ scenario: String, _ contender: String) -> String {
  String("\(scenario):\(contender)".map { $0 == " " ? "-" : $0 })
}

// MARK: - The floor: one allocation, one uncontended lock round-trip and one closure call per step

final class FloorStep {
  let body: (Int) -> Int
  init(_ body: @escaping (Int) -> Int) { self.body = body }
}

/// A mutex for the floor. `@unchecked Sendable`: the mutex is the synchronisation; it is allocated once
/// and never freed.
final class FloorLock: @unchecked Sendable {
  let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    return mutex
  }()
}

let floorLock = FloorLock()

@inline(never) func floorSteps(_ count: Int) -> Int {
  var value = 0
  for _ in 0..<count {
    let step = FloorStep { $0 + 1 }
    blackHole(step)
    pthread_mutex_lock(floorLock.mutex)
    pthread_mutex_unlock(floorLock.mutex)
    value = step.body(value)
  }
  return value
}

/// Registers the floor in `scenario`: `steps` floor steps per iteration.
func floor(
  _ scenario: String, steps: Int = n, configuration: Benchmark.Configuration = Benchmark.defaultConfiguration
) {
  contender(scenario, "floor", configuration: configuration) { _ in blackHole(floorSteps(steps)) }
}

// MARK: - Shared by several scenarios

/// A pending OpenCombine `Future` and the function that fulfils it.
func pendingFuture() -> (Future<Int, Never>, Future<Int, Never>.Promise) {
  nonisolated(unsafe) var fulfil: Future<Int, Never>.Promise?
  let future = Future<Int, Never> { fulfil = $0 }
  return (future, fulfil ?? { _ in })
}

@inline(never) func asyncStep(_ value: Int) async -> Int { value + 1 }

// MARK: - Chains on a pending root (S1, S3, S7): build steps, then settle the root (more in Workloads)

/// OpenCombine has no chaining of futures: each step is a new `Future` that `subscribe`s to the previous
/// one and settles with what `subscribe` delivers. `combineChain` steps.
func pendingRootChain(
  _ subscribe: @escaping (Future<Int, Never>, @escaping (Int) -> Void) -> AnyCancellable
) {
  let (root, fulfil) = pendingFuture()
  var tail = root
  var subscriptions: [AnyCancellable] = []
  for _ in 0..<combineChain {
    let previous = tail
    tail = Future { promise in subscriptions.append(subscribe(previous) { promise(.success($0)) }) }
  }
  fulfil(.success(0))
  blackHole(tail)
}

// MARK: - S1: attach n map steps to a pending root, then settle it

func chainOnPendingRoot() {
  let scenario = "S1 pending chain"
  sharedContenders(scenario)
  contender(scenario, "OpenCombine (\(combineChain) steps)") { _ in
    pendingRootChain { previous, deliver in previous.sink { deliver($0 + 1) } }
  }
  contender(scenario, "async-await") {
    var value = await withCheckedContinuation { $0.resume(returning: 0) }
    for _ in 0..<n { value = await asyncStep(value) }
    blackHole(value)
  }
  floor(scenario)
}

// MARK: - S2: attach n map steps to a settled root

func chainOnSettledRoot() {
  let scenario = "S2 settled chain"
  sharedContenders(scenario)
  contender(scenario, "OpenCombine") { _ in
    var tail = Future<Int, Never> { $0(.success(0)) }
    var subscriptions: [AnyCancellable] = []
    for _ in 0..<n {
      let previous = tail
      tail = Future { promise in subscriptions.append(previous.sink { promise(.success($0 + 1)) }) }
    }
    blackHole(tail)
  }
  contender(scenario, "async-await") {
    var value = 0
    for _ in 0..<n { value = await asyncStep(value) }
    blackHole(value)
  }
  floor(scenario)
}

// MARK: - S3: n thenAsync steps, each returning a settled promise, on a pending root

func thenAsyncChain() {
  let scenario = "S3 thenAsync chain"
  sharedContenders(scenario)
  // What app code writes: a closure that captures something (as swift-nio's captures its event loop). Its
  // malloc threshold is the same as the plain contender's: the closure is stored as it is, with no thunk.
  contender(scenario, "ResultPromise, capturing an object") { _ in
    let offset = Offset(1)
    pendingRootChain(n) { $0.thenAsync { [offset] in ResultPromise<Int, Never>(value: $0 + offset.amount) } }
  }
  contender(scenario, "OpenCombine (\(combineChain) steps)") { _ in
    pendingRootChain { previous, deliver in
      previous.flatMap { value in Future<Int, Never> { $0(.success(value + 1)) } }.sink { deliver($0) }
    }
  }
  contender(scenario, "async-await") {
    var value = await withCheckedContinuation { $0.resume(returning: 0) }
    for _ in 0..<n {
      let current = value
      value = await withCheckedContinuation { $0.resume(returning: current + 1) }
    }
    blackHole(value)
  }
  floor(scenario)
}

/// An object for a step's closure to capture.
final class Offset: Sendable {
  let amount: Int
  init(_ amount: Int) { self.amount = amount }
}

// MARK: - S4: n observers on one pending promise, then settle

/// Holds a continuation until a value arrives, or a value until the continuation arrives.
final class Gate: Sendable {
  enum State {
    case empty
    case waiting(CheckedContinuation<Int, Never>)
    case value(Int)
  }
  let state = Mutex<State>(.empty)

  func wait() async -> Int {
    await withCheckedContinuation { continuation in
      let ready: Int? = state.withLock { state in
        if case .value(let value) = state { return value }
        state = .waiting(continuation)
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  func open(_ value: Int) {
    let waiting: CheckedContinuation<Int, Never>? = state.withLock { state in
      defer { state = .value(value) }
      if case .waiting(let continuation) = state { return continuation }
      return nil
    }
    waiting?.resume(returning: value)
  }
}

func fanOut() {
  let scenario = "S4 fan-out"
  sharedContenders(scenario)
  contender(scenario, "OpenCombine") { _ in
    let (future, fulfil) = pendingFuture()
    var subscriptions: [AnyCancellable] = []
    subscriptions.reserveCapacity(n)
    for _ in 0..<n { subscriptions.append(future.sink { blackHole($0) }) }
    fulfil(.success(1))
    blackHole(subscriptions)
  }
  contender(scenario, "async-await (tasks awaiting one value)") {
    let gate = Gate()
    let root = Task { await gate.wait() }
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<n { group.addTask { blackHole(await root.value) } }
      gate.open(1)
    }
  }
  floor(scenario)
}

// MARK: - S5: combine n pending promises, then settle them one by one

func allOfMany() {
  let scenario = "S5 all"
  sharedContenders(scenario)
  contender(scenario, "OpenCombine flatMap.collect") { _ in
    let inputs = (0..<n).map { _ in pendingFuture() }
    let all = Publishers.Sequence<[Future<Int, Never>], Never>(sequence: inputs.map(\.0))
      .flatMap { $0 }.collect().sink { blackHole($0) }
    for (_, fulfil) in inputs { fulfil(.success(1)) }
    blackHole(all)
  }
  contender(scenario, "async-await task group") {
    let values = await withTaskGroup(of: Int.self) { group in
      for index in 0..<n { group.addTask { index } }
      return await group.reduce(into: [Int]()) { $0.append($1) }
    }
    blackHole(values)
  }
  floor(scenario)
}

// MARK: - S6: bytes per pending promise with one observer (1,000,000 of them)

#if canImport(Glibc)
  /// glibc's `malloc_trim` (its header is not part of the Glibc module): returns free heap to the system.
  @_silgen_name("malloc_trim") func mallocTrim(_ pad: Int) -> Int32
#endif

/// The resident set size of this process, in bytes.
func residentBytes() -> Int {
  #if os(Linux)
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    _ = withUnsafeMutablePointer(to: &size) { sizePointer in
      withUnsafeMutablePointer(to: &resident) { residentPointer in
        withVaList([sizePointer, residentPointer]) { vfscanf(file, "%ld %ld", $0) }
      }
    }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
  #else
    return 0
  #endif
}

func memoryPerPromise() {
  let scenario = "S6 memory"
  let count = 1_000_000
  let bytesPerObject = BenchmarkMetric.custom("RSS bytes per promise", polarity: .prefersSmaller)
  let configuration = Metrics.configuration(maxIterations: 3, extra: [bytesPerObject])

  /// Registers a contender whose `make` builds one of `count` objects kept alive together, and records
  /// the growth of the resident set per object; the array holding them (8 bytes a slot) is not counted.
  /// The benchmark's malloc interposer adds a 16-byte header to every allocation, which this includes.
  func resident(_ name: String, _ make: @escaping () -> AnyObject) {
    contender(scenario, name, configuration: configuration) { benchmark in
      // Hand memory freed by earlier benchmarks back to the system, so the new objects must fault in
      // fresh pages instead of reusing resident ones.
      #if canImport(Glibc)
        _ = mallocTrim(0)
      #endif
      let before = residentBytes()
      let held = (0..<count).map { _ in make() }
      let after = residentBytes()
      if !Metrics.mallocOnly {
        benchmark.measurement(bytesPerObject, (after - before) / count - MemoryLayout<AnyObject>.stride)
      }
      blackHole(held)
    }
  }

  resident("ResultPromise") {
    let promise = ResultPromise<Int, Never>()
    promise.await { blackHole($0) }
    return promise
  }
  let loop = EmbeddedEventLoop()
  resident("NIO embedded") {
    let promise = loop.makePromise(of: Int.self)
    promise.futureResult.whenComplete { blackHole($0) }
    return promise.futureResult
  }
  resident("OpenCombine") { pendingFuture().0.sink { blackHole($0) } }
  // The floor: one object holding one closure, as a floor step allocates.
  resident("floor") { FloorStep { $0 + 1 } }
}

// MARK: - S7: the longest synchronous chain: 1,000,000 steps of each shape

func longestChain() {
  let scenario = "S7 1,000,000-step chain"
  let length = 1_000_000
  let configuration = Metrics.configuration(maxIterations: 3)
  struct Failure: Error {}
  typealias Step = (ResultPromise<Int, Failure>) -> ResultPromise<Int, Failure>
  let shapes: [(String, Step)] = [
    ("map", { $0.map { $0 + 1 } }),
    ("then", { $0.then { .success($0 + 1) } }),
    ("thenAsync", { $0.thenAsync { ResultPromise(value: $0 + 1) } }),
    ("mapError", { $0.mapError { $0 } }),
    ("recover", { $0.recover { _ in .success(0) } }),
    ("always", { $0.always { _ in } }),
  ]
  for (shape, step) in shapes {
    contender(scenario, "ResultPromise \(shape)", configuration: configuration) { _ in
      pendingRootChain(length, step)
    }
  }
  contender(scenario, "NIO embedded map", configuration: configuration) { _ in
    pendingRootChain(length) { $0.map { $0 + 1 } }
  }
  floor(scenario, steps: length, configuration: configuration)
}

// MARK: - S8: n promises settled on one thread while observers attach from another

func crossThread() {
  let scenario = "S8 cross-thread"
  sharedContenders(scenario)
  contender(scenario, "OpenCombine") { benchmark in
    let inputs = (0..<n).map { _ in pendingFuture() }
    nonisolated(unsafe) let fulfils = inputs.map(\.1)
    let countdown = Countdown(n)
    var subscriptions: [AnyCancellable] = []
    subscriptions.reserveCapacity(n)
    benchmark.startMeasurement()
    DispatchQueue.global().async { for fulfil in fulfils { fulfil(.success(1)) } }
    for (future, _) in inputs { subscriptions.append(future.sink { _ in countdown.arrive() }) }
    countdown.done.wait()
    blackHole(subscriptions)
  }
  contender(scenario, "async-await detached tasks") {
    let tasks = (0..<n).map { index in Task.detached { index } }
    var sum = 0
    for task in tasks { sum &+= await task.value }
    blackHole(sum)
  }
  floor(scenario)
}

// MARK: - S9: a chain that can be cancelled: n map steps on a cancellable root, settled or cancelled

func cancellableChain() {
  let scenario = "S9 cancellable chain"
  contender(scenario, "ResultPromise settled") { _ in cancellableRootChain(n, cancelling: false) }
  contender(scenario, "ResultPromise cancelled from its end") { _ in cancellableRootChain(n, cancelling: true)
  }
  contender(scenario, "ResultPromise plain, for comparison") { _ in
    pendingRootChain(n) { (promise: ResultPromise<Int, Never>) in promise.map { $0 + 1 } }
  }
  floor(scenario)
}
