// ResultPromise side by side with swift-nio's EventLoopFuture, OpenCombine's Future, plain Swift
// Concurrency and a floor, in one run. Scenarios S1–S8 are described in the README's Performance
// section; every benchmark does `n` steps per iteration, so ns per step = µs per iteration × 1000 / n.
import Benchmark
import Dispatch
import NIOCore
import NIOEmbedded
import NIOPosix
import OpenCombine
import ResultPromise
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Steps per iteration.
let n = 100_000
/// Steps per iteration for OpenCombine chains on a pending root: its `Future` delivers recursively, so a
/// chain of `n` overflows the stack (see the README).
let combineChain = 1_000

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: ProcessInfoMetrics.selected,
    timeUnits: .microseconds,
    warmupIterations: 1,
    maxDuration: .seconds(2),
    maxIterations: 30,
    thresholds: ProcessInfoMetrics.thresholds
  )
  chainOnPendingRoot()
  chainOnSettledRoot()
  thenAsyncChain()
  fanOut()
  allOfMany()
  memoryPerPromise()
  longestChain()
  crossThread()
}

/// Metrics: wall clock and malloc count; `RESULTPROMISE_BENCH_MALLOC_ONLY=1` (used by CI) keeps only the
/// deterministic malloc count.
enum ProcessInfoMetrics {
  static let mallocOnly = getenv("RESULTPROMISE_BENCH_MALLOC_ONLY") != nil
  static var selected: [BenchmarkMetric] {
    mallocOnly ? [.mallocCountTotal] : [.wallClock, .mallocCountTotal]
  }
  /// Malloc counts are deterministic: allow a few for the runtime's own bookkeeping, so that one more
  /// allocation per step (100,000 per iteration) fails the check.
  static var thresholds: [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: .init(absolute: [.p90: 4])]
  }
}

// MARK: - The floor: one allocation, one uncontended lock round-trip and one closure call per step

final class FloorStep {
  let body: (Int) -> Int
  init(_ body: @escaping (Int) -> Int) { self.body = body }
}

final class FloorLock: @unchecked Sendable {
  // @unchecked Sendable: the mutex is the synchronisation; it is allocated once and never freed.
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

func floor(_ scenario: String) {
  Benchmark(label(scenario, "floor")) { benchmark in
    for _ in benchmark.scaledIterations { blackHole(floorSteps(n)) }
  }
}

// MARK: - Helpers

/// A benchmark's name: `scenario:contender` without spaces or slashes, because package-benchmark's
/// threshold check looks files up by the raw name while it writes them with those replaced.
func label(_ scenario: String, _ contender: String) -> String {
  String("\(scenario):\(contender)".map { $0 == " " ? "-" : $0 })
}

@inline(never) func asyncStep(_ value: Int) async -> Int { value + 1 }

/// Counts down from `count` and signals when it reaches zero.
final class Countdown: Sendable {
  let remaining: Atomic<Int>
  let done = DispatchSemaphore(value: 0)
  init(_ count: Int) { remaining = Atomic(count) }
  func arrive() {
    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.signal() }
  }
}

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

/// A pending OpenCombine `Future` and the function that fulfils it.
func pendingFuture() -> (Future<Int, Never>, Future<Int, Never>.Promise) {
  nonisolated(unsafe) var fulfil: Future<Int, Never>.Promise?
  let future = Future<Int, Never> { fulfil = $0 }
  return (future, fulfil ?? { _ in })
}

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

// MARK: - S1: attach n map steps to a pending root, then settle it

func chainOnPendingRoot() {
  let scenario = "S1 pending chain"
  Benchmark(label(scenario, "ResultPromise")) { benchmark in
    for _ in benchmark.scaledIterations {
      let root = ResultPromise<Int, Never>()
      var tail = root
      for _ in 0..<n { tail = tail.map { $0 + 1 } }
      root.succeed(0)
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "NIO embedded")) { benchmark in
    let loop = EmbeddedEventLoop()
    for _ in benchmark.scaledIterations {
      let root = loop.makePromise(of: Int.self)
      var tail = root.futureResult
      for _ in 0..<n { tail = tail.map { $0 + 1 } }
      root.succeed(0)
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "OpenCombine (\(combineChain) steps)")) { benchmark in
    for _ in benchmark.scaledIterations {
      let (root, fulfil) = pendingFuture()
      var tail = root
      var subscriptions: [AnyCancellable] = []
      for _ in 0..<combineChain {
        let previous = tail
        tail = Future { promise in subscriptions.append(previous.sink { promise(.success($0 + 1)) }) }
      }
      fulfil(.success(0))
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "async-await")) { benchmark async in
    for _ in benchmark.scaledIterations {
      var value = await withCheckedContinuation { $0.resume(returning: 0) }
      for _ in 0..<n { value = await asyncStep(value) }
      blackHole(value)
    }
  }
  floor(scenario)
}

// MARK: - S2: attach n map steps to a settled root

func chainOnSettledRoot() {
  let scenario = "S2 settled chain"
  Benchmark(label(scenario, "ResultPromise")) { benchmark in
    for _ in benchmark.scaledIterations {
      var tail = ResultPromise<Int, Never>(value: 0)
      for _ in 0..<n { tail = tail.map { $0 + 1 } }
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "NIO embedded")) { benchmark in
    let loop = EmbeddedEventLoop()
    for _ in benchmark.scaledIterations {
      var tail = loop.makeSucceededFuture(0)
      for _ in 0..<n { tail = tail.map { $0 + 1 } }
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "OpenCombine")) { benchmark in
    for _ in benchmark.scaledIterations {
      var tail = Future<Int, Never> { $0(.success(0)) }
      var subscriptions: [AnyCancellable] = []
      for _ in 0..<n {
        let previous = tail
        tail = Future { promise in subscriptions.append(previous.sink { promise(.success($0 + 1)) }) }
      }
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "async-await")) { benchmark async in
    for _ in benchmark.scaledIterations {
      var value = 0
      for _ in 0..<n { value = await asyncStep(value) }
      blackHole(value)
    }
  }
  floor(scenario)
}

// MARK: - S3: n thenAsync steps, each returning a settled promise, on a pending root

func thenAsyncChain() {
  let scenario = "S3 thenAsync chain"
  Benchmark(label(scenario, "ResultPromise")) { benchmark in
    for _ in benchmark.scaledIterations {
      let root = ResultPromise<Int, Never>()
      var tail = root
      for _ in 0..<n { tail = tail.thenAsync { ResultPromise(value: $0 + 1) } }
      root.succeed(0)
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "NIO embedded")) { benchmark in
    let loop = EmbeddedEventLoop()
    for _ in benchmark.scaledIterations {
      let root = loop.makePromise(of: Int.self)
      var tail = root.futureResult
      for _ in 0..<n {
        tail = tail.flatMap { [eventLoop = tail.eventLoop] in eventLoop.makeSucceededFuture($0 + 1) }
      }
      root.succeed(0)
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "OpenCombine (\(combineChain) steps)")) { benchmark in
    for _ in benchmark.scaledIterations {
      let (root, fulfil) = pendingFuture()
      var tail = root
      var subscriptions: [AnyCancellable] = []
      for _ in 0..<combineChain {
        let previous = tail
        tail = Future { promise in
          subscriptions.append(
            previous.flatMap { value in Future<Int, Never> { $0(.success(value + 1)) } }
              .sink { promise(.success($0)) })
        }
      }
      fulfil(.success(0))
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "async-await")) { benchmark async in
    for _ in benchmark.scaledIterations {
      var value = await withCheckedContinuation { $0.resume(returning: 0) }
      for _ in 0..<n {
        let current = value
        value = await withCheckedContinuation { $0.resume(returning: current + 1) }
      }
      blackHole(value)
    }
  }
  floor(scenario)
}

// MARK: - S4: n observers on one pending promise, then settle

func fanOut() {
  let scenario = "S4 fan-out"
  Benchmark(label(scenario, "ResultPromise")) { benchmark in
    for _ in benchmark.scaledIterations {
      let promise = ResultPromise<Int, Never>()
      for _ in 0..<n { promise.await { blackHole($0) } }
      promise.succeed(1)
    }
  }
  Benchmark(label(scenario, "NIO embedded")) { benchmark in
    let loop = EmbeddedEventLoop()
    for _ in benchmark.scaledIterations {
      let promise = loop.makePromise(of: Int.self)
      for _ in 0..<n { promise.futureResult.whenComplete { blackHole($0) } }
      promise.succeed(1)
    }
  }
  Benchmark(label(scenario, "OpenCombine")) { benchmark in
    for _ in benchmark.scaledIterations {
      let (future, fulfil) = pendingFuture()
      var subscriptions: [AnyCancellable] = []
      subscriptions.reserveCapacity(n)
      for _ in 0..<n { subscriptions.append(future.sink { blackHole($0) }) }
      fulfil(.success(1))
      blackHole(subscriptions)
    }
  }
  Benchmark(label(scenario, "async-await (tasks awaiting one value)")) { benchmark async in
    for _ in benchmark.scaledIterations {
      let gate = Gate()
      let root = Task { await gate.wait() }
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<n { group.addTask { blackHole(await root.value) } }
        gate.open(1)
      }
    }
  }
  floor(scenario)
}

// MARK: - S5: combine n pending promises, then settle them one by one

func allOfMany() {
  let scenario = "S5 all"
  Benchmark(label(scenario, "ResultPromise")) { benchmark in
    for _ in benchmark.scaledIterations {
      let inputs = (0..<n).map { _ in ResultPromise<Int, Never>() }
      let all = ResultPromise.all(inputs)
      for input in inputs { input.succeed(1) }
      blackHole(all)
    }
  }
  Benchmark(label(scenario, "NIO embedded whenAllSucceed")) { benchmark in
    let loop = EmbeddedEventLoop()
    for _ in benchmark.scaledIterations {
      let inputs = (0..<n).map { _ in loop.makePromise(of: Int.self) }
      let all = EventLoopFuture.whenAllSucceed(inputs.map(\.futureResult), on: loop)
      for input in inputs { input.succeed(1) }
      blackHole(all)
    }
  }
  Benchmark(label(scenario, "OpenCombine flatMap.collect")) { benchmark in
    for _ in benchmark.scaledIterations {
      let inputs = (0..<n).map { _ in pendingFuture() }
      let all = Publishers.Sequence<[Future<Int, Never>], Never>(sequence: inputs.map(\.0))
        .flatMap { $0 }.collect().sink { blackHole($0) }
      for (_, fulfil) in inputs { fulfil(.success(1)) }
      blackHole(all)
    }
  }
  Benchmark(label(scenario, "async-await task group")) { benchmark async in
    for _ in benchmark.scaledIterations {
      let values = await withTaskGroup(of: Int.self) { group in
        for index in 0..<n { group.addTask { index } }
        return await group.reduce(into: [Int]()) { $0.append($1) }
      }
      blackHole(values)
    }
  }
  floor(scenario)
}

// MARK: - S6: bytes per pending promise with one observer (1,000,000 of them)

func memoryPerPromise() {
  let scenario = "S6 memory"
  let count = 1_000_000
  let bytesPerPromise = BenchmarkMetric.custom("RSS bytes per promise", polarity: .prefersSmaller)
  let configuration = Benchmark.Configuration(
    metrics: ProcessInfoMetrics.selected + (ProcessInfoMetrics.mallocOnly ? [] : [bytesPerPromise]),
    maxIterations: 3, thresholds: ProcessInfoMetrics.thresholds)

  /// Measures the growth of the resident set while `make` builds `count` pending promises with one
  /// observer each; the array holding them (8 bytes a slot) is not counted. The benchmark's malloc
  /// interposer adds a 16-byte header to every allocation, which this includes.
  func measure(_ benchmark: Benchmark, _ make: () -> [AnyObject]) {
    // Hand memory freed by earlier benchmarks back to the system, so the new promises must fault in
    // fresh pages instead of reusing resident ones.
    #if canImport(Glibc)
      _ = mallocTrim(0)
    #endif
    let before = residentBytes()
    let held = make()
    let after = residentBytes()
    if !ProcessInfoMetrics.mallocOnly {
      benchmark.measurement(bytesPerPromise, (after - before) / count - MemoryLayout<AnyObject>.stride)
    }
    blackHole(held)
  }

  Benchmark(label(scenario, "ResultPromise"), configuration: configuration) { benchmark in
    measure(benchmark) {
      (0..<count).map { _ in
        let promise = ResultPromise<Int, Never>()
        promise.await { blackHole($0) }
        return promise
      }
    }
  }
  Benchmark(label(scenario, "NIO embedded"), configuration: configuration) { benchmark in
    let loop = EmbeddedEventLoop()
    measure(benchmark) {
      (0..<count).map { _ in
        let promise = loop.makePromise(of: Int.self)
        promise.futureResult.whenComplete { blackHole($0) }
        return promise.futureResult
      }
    }
    blackHole(loop)
  }
  Benchmark(label(scenario, "OpenCombine"), configuration: configuration) { benchmark in
    measure(benchmark) {
      (0..<count).map { _ in
        let (future, _) = pendingFuture()
        return future.sink { blackHole($0) }
      }
    }
  }
}

// MARK: - S7: the longest synchronous chain: 1,000,000 steps of each shape

func longestChain() {
  let scenario = "S7 1,000,000-step chain"
  let length = 1_000_000
  let configuration = Benchmark.Configuration(
    metrics: ProcessInfoMetrics.selected, maxIterations: 3, thresholds: ProcessInfoMetrics.thresholds)
  struct Failure: Error {}
  typealias Step = (ResultPromise<Int, Failure>) -> ResultPromise<Int, Failure>
  let shapes: [(String, Step)] = [
    ("map", { $0.map { $0 + 1 } }),
    ("then", { $0.then { .success($0 + 1) } }),
    ("thenAsync", { $0.thenAsync { ResultPromise(value: $0 + 1) } }),
    ("recover", { $0.recover { _ in .success(0) } }),
    ("always", { $0.always { _ in } }),
  ]
  for (shape, step) in shapes {
    Benchmark(label(scenario, "ResultPromise \(shape)"), configuration: configuration) { benchmark in
      let root = ResultPromise<Int, Failure>()
      var tail = root
      for _ in 0..<length { tail = step(tail) }
      root.succeed(0)
      blackHole(tail)
    }
  }
  Benchmark(label(scenario, "NIO embedded map"), configuration: configuration) { benchmark in
    let loop = EmbeddedEventLoop()
    let root = loop.makePromise(of: Int.self)
    var tail = root.futureResult
    for _ in 0..<length { tail = tail.map { $0 + 1 } }
    root.succeed(0)
    blackHole(tail)
  }
}

// MARK: - S8: n promises settled on one thread while observers attach from another

func crossThread() {
  let scenario = "S8 cross-thread"
  Benchmark(label(scenario, "ResultPromise")) { benchmark in
    for _ in benchmark.scaledIterations {
      let promises = (0..<n).map { _ in ResultPromise<Int, Never>() }
      let countdown = Countdown(n)
      benchmark.startMeasurement()
      DispatchQueue.global().async { for promise in promises { promise.succeed(1) } }
      for promise in promises { promise.await { _ in countdown.arrive() } }
      countdown.done.wait()
    }
  }
  let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  Benchmark(label(scenario, "NIO multi-threaded loop")) { benchmark in
    let loop = group.next()
    for _ in benchmark.scaledIterations {
      let promises = (0..<n).map { _ in loop.makePromise(of: Int.self) }
      let countdown = Countdown(n)
      benchmark.startMeasurement()
      loop.execute { for promise in promises { promise.succeed(1) } }
      for promise in promises { promise.futureResult.whenComplete { _ in countdown.arrive() } }
      countdown.done.wait()
    }
  }
  Benchmark(label(scenario, "OpenCombine")) { benchmark in
    for _ in benchmark.scaledIterations {
      let inputs = (0..<n).map { _ in pendingFuture() }
      let fulfils = inputs.map(\.1)
      let countdown = Countdown(n)
      var subscriptions: [AnyCancellable] = []
      subscriptions.reserveCapacity(n)
      benchmark.startMeasurement()
      nonisolated(unsafe) let unchecked = fulfils
      DispatchQueue.global().async { for fulfil in unchecked { fulfil(.success(1)) } }
      for (future, _) in inputs { subscriptions.append(future.sink { _ in countdown.arrive() }) }
      countdown.done.wait()
      blackHole(subscriptions)
    }
  }
  Benchmark(label(scenario, "async-await detached tasks")) { benchmark async in
    for _ in benchmark.scaledIterations {
      let tasks = (0..<n).map { index in Task.detached { index } }
      var sum = 0
      for task in tasks { sum &+= await task.value }
      blackHole(sum)
    }
  }
  floor(scenario)
}
