import Dispatch
import ResultPromise
import Testing

/// Applies `body` to `value`; a closure that calls this captures `object` for as long as it lives.
func passing<T, U>(_ value: T, keeping object: AnyObject, _ body: (T) -> U) -> U {
  withExtendedLifetime(object) { body(value) }
}

/// Semantics 6: settled promises drop their observers, chains release each closure once it has run,
/// and the library makes no retain cycles. Proven with `weak` references.
@Suite("Leaks")
struct LeakTests {
  @Test("a settled promise drops its observers and what they captured, while the promise lives on")
  func settledPromiseDropsObservers() {
    let promise = ResultPromise<Int, TestError>()
    weak var weakCaptured: Tracked?
    do {
      let captured = Tracked()
      weakCaptured = captured
      promise.await { _ in _ = captured }
      promise.await { _ in _ = captured }
    }
    #expect(weakCaptured != nil)
    promise.succeed(1)
    #expect(weakCaptured == nil)
  }

  @Test("each step's closure is released once it has run, while the chain's tail lives on")
  func chainReleasesClosures() {
    let root = ResultPromise<Int, TestError>()
    weak var weakCaptured: Tracked?
    let tail: ResultPromise<Int, AppError>
    do {
      let captured = Tracked()
      weakCaptured = captured
      tail = root.then { passing($0, keeping: captured) { .success($0) } }
        .map { passing($0, keeping: captured) { $0 } }
        .mapError { passing($0, keeping: captured) { AppError.wrapped($0) } }
        .thenAsync { passing($0, keeping: captured) { ResultPromise(value: $0) } }
        .recover { passing($0, keeping: captured) { _ in Result<Int, AppError>.success(0) } }
        .recoverAsync { passing($0, keeping: captured) { _ in ResultPromise<Int, AppError>(value: 0) } }
    }
    #expect(weakCaptured != nil)
    root.succeed(1)
    #expect(weakCaptured == nil)
    #expect(!tail.isPending)
  }

  @Test("a step made on a settled promise runs its closure at once and releases it before returning")
  func settledChainReleasesClosures() {
    weak var weakCaptured: Tracked?
    let tail: ResultPromise<Int, AppError>
    do {
      let captured = Tracked()
      weakCaptured = captured
      tail = ResultPromise<Int, TestError>(value: 1).then { passing($0, keeping: captured) { .success($0) } }
        .map { passing($0, keeping: captured) { $0 } }
        .mapError { passing($0, keeping: captured) { AppError.wrapped($0) } }
        .thenAsync { passing($0, keeping: captured) { ResultPromise(value: $0) } }
        .recover { passing($0, keeping: captured) { _ in Result<Int, AppError>.success(0) } }
        .recoverAsync { passing($0, keeping: captured) { _ in ResultPromise<Int, AppError>(value: 0) } }
    }
    #expect(weakCaptured == nil)
    #expect(!tail.isPending)
  }

  @Test("the promises of a settled chain are freed once the caller lets go of them")
  func settledChainIsFreed() {
    weak var weakRoot: ResultPromise<Int, TestError>?
    weak var weakMiddle: ResultPromise<Int, TestError>?
    weak var weakTail: ResultPromise<String, TestError>?
    let result = Log<Result<String, TestError>>()
    do {
      let root = ResultPromise<Int, TestError>()
      let middle = root.map { $0 + 1 }
      let tail = middle.then { .success("\($0)") }
      tail.await(result.append)
      (weakRoot, weakMiddle, weakTail) = (root, middle, tail)
      root.succeed(1)
    }
    #expect(result.values == [.success("2")])
    #expect(weakRoot == nil)
    #expect(weakMiddle == nil)
    #expect(weakTail == nil)
  }

  @Test("a pending chain that is dropped frees its promises and captured objects")
  func droppedPendingChainIsFreed() {
    BrokenPromiseReports.install()
    weak var weakTail: ResultPromise<Int, TestError>?
    weak var weakCaptured: Tracked?
    do {
      let captured = Tracked()
      weakCaptured = captured
      let root = ResultPromise<Int, TestError>()
      let tail = root.map { passing($0, keeping: captured) { $0 } }.thenAsync { _ in
        ResultPromise<Int, TestError>()
      }
      weakTail = tail
    }
    #expect(weakTail == nil)
    #expect(weakCaptured == nil)
  }

  @Test("the promise from thenAsync and the inner promise it adopted are freed after settling")
  func adoptedPromiseIsFreed() async {
    weak var weakInner: ResultPromise<Int, TestError>?
    weak var weakOuter: ResultPromise<Int, TestError>?
    let result = Log<Result<Int, TestError>>()
    let done = DispatchSemaphore(value: 0)
    do {
      let inner = ResultPromise<Int, TestError>()
      let outer = ResultPromise<Int, TestError>(value: 1).thenAsync { _ in inner }
      outer.await {
        result.append($0)
        done.signal()
      }
      (weakInner, weakOuter) = (inner, outer)
      DispatchQueue.global().async { inner.succeed(5) }
    }
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        done.wait()
        continuation.resume()
      }
    }
    #expect(result.values == [.success(5)])
    // The thread that settled `inner` signals from inside its delivery, and lets go of both promises only
    // after: wait for it, bounded, so that a leak still fails (under ThreadSanitizer it once had not yet).
    let deadline = ContinuousClock.now + .seconds(10)
    while weakInner != nil || weakOuter != nil, ContinuousClock.now < deadline { await Task.yield() }
    #expect(weakInner == nil)
    #expect(weakOuter == nil)
  }

  @Test("a promise from init(_ start:) is freed when its fulfil function is dropped uncalled")
  func unusedFulfilIsFreed() {
    weak var weakPromise: ResultPromise<Int, TestError>?
    do {
      let promise = ResultPromise<Int, TestError> { _ in }
      weakPromise = promise
    }
    #expect(weakPromise == nil)
  }

  @Test("a promise that observes itself from its own observer leaves no cycle once settled")
  func selfReferenceIsBroken() {
    weak var weakPromise: ResultPromise<Int, TestError>?
    let calls = Counter()
    do {
      let promise = ResultPromise<Int, TestError>()
      promise.await { _ in promise.await { _ in calls.increment() } }
      weakPromise = promise
      promise.succeed(1)
    }
    #expect(calls.value == 1)
    #expect(weakPromise == nil)
  }
}
