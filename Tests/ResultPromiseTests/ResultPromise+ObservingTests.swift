import Foundation
import ResultPromise
import Testing

@Suite("Observing: onSuccess, onFailure, always, alwaysAsync, validate, compactMap, init(catching:)")
struct ObservingTests {
  @Test("onSuccess runs with the value on success and not on failure, and returns the same promise")
  func onSuccess() {
    let seen = Log<Int>()
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.onSuccess(seen.append) === promise)
    let failed = ResultPromise<Int, TestError>(error: .boom).onSuccess(seen.append)
    promise.succeed(3)
    #expect(failed.settledResult == .failure(.boom))  // read, so its failure is not reported as unheard
    #expect(seen.values == [3])
  }

  @Test("onFailure runs with the error on failure and not on success, and returns the same promise")
  func onFailure() {
    let seen = Log<TestError>()
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.onFailure(seen.append) === promise)
    ResultPromise<Int, TestError>(value: 1).onFailure(seen.append)
    promise.fail(.other(2))
    #expect(seen.values == [.other(2)])
  }

  @Test("onSuccess and onFailure chain on one promise and keep registration order")
  func chainedObservers() {
    let order = Log<String>()
    let promise = ResultPromise<Int, TestError>()
    promise
      .onSuccess { order.append("success \($0)") }
      .onFailure { order.append("failure \($0)") }
      .onSuccess { order.append("again \($0)") }
    promise.succeed(1)
    #expect(order.values == ["success 1", "again 1"])
  }

  @Test("always runs on success and on failure, then passes the same result on")
  func alwaysPassesResultOn() {
    let ran = Log<Result<Int, TestError>>()
    let passed = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 1).always(ran.append).await(passed.append)
    ResultPromise<Int, TestError>(error: .boom).always(ran.append).await(passed.append)
    #expect(ran.values == [.success(1), .failure(.boom)])
    #expect(passed.values == ran.values)
  }

  @Test("the promise from always settles only after its body has returned")
  func alwaysSettlesAfterBody() {
    let order = Log<String>()
    let root = ResultPromise<Int, TestError>()
    let next = root.always { _ in order.append("body") }
    next.await { _ in order.append("next observer") }
    #expect(next.isPending)
    root.succeed(1)
    #expect(order.values == ["body", "next observer"])
  }

  @Test("onSuccess, onFailure and always registered earlier run on the thread that settles the promise")
  func observersRunOnSettlingThread() async {
    let success = ResultPromise<Int, TestError>()
    let failure = ResultPromise<Int, TestError>()
    let ranOn = Log<ObjectIdentifier>()
    success.onSuccess { _ in ranOn.append(currentThreadID()) }
    failure.onFailure { _ in ranOn.append(currentThreadID()) }
    success.always { _ in ranOn.append(currentThreadID()) }.onSuccess { _ in ranOn.append(currentThreadID()) }
    let settler = Log<ObjectIdentifier>()
    await onSmallStack {
      settler.append(currentThreadID())
      success.succeed(1)
      failure.fail(.boom)
    }
    #expect(ranOn.count == 4)
    #expect(Set(ranOn.values) == Set(settler.values))
  }

  @Test("on a settled promise, onSuccess and always run on the calling thread before returning")
  func settledObserversRunSynchronously() {
    let ranOn = Log<ObjectIdentifier>()
    let promise = ResultPromise<Int, TestError>(value: 1)
    promise.onSuccess { _ in ranOn.append(currentThreadID()) }
    _ = promise.always { _ in ranOn.append(currentThreadID()) }
    #expect(ranOn.values == [currentThreadID(), currentThreadID()])
  }

  // MARK: settledResult

  @Test("settledResult is nil while pending and the outcome once settled, either way")
  func settledResultBeforeAndAfter() {
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.settledResult == nil)
    promise.succeed(4)
    #expect(promise.settledResult == .success(4))
    #expect(ResultPromise<Int, TestError>(error: .boom).settledResult == .failure(.boom))
    promise.succeed(5)
    #expect(promise.settledResult == .success(4), "a later fulfil changes nothing")
  }

  @Test("settledResult sees the outcome while a delivery is still under way on another thread")
  func settledResultDuringDelivery() {
    let promise = ResultPromise<Int, TestError>()
    let observerRunning = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let delivered = DispatchSemaphore(value: 0)
    promise.await { _ in
      observerRunning.signal()
      release.wait()  // the delivery stays under way until the test has read
    }
    Thread {
      promise.succeed(7)
      delivered.signal()
    }.start()
    observerRunning.wait()
    #expect(promise.settledResult == .success(7))
    release.signal()
    delivered.wait()
    #expect(promise.settledResult == .success(7))
  }

  @Test("settledResult is never stale once fulfil has returned on another thread (2,000 trials)")
  func settledResultNeverStale() {
    let stale = Counter()
    let wrong = Counter()
    for trial in 0..<2_000 {
      let promise = ResultPromise<Int, TestError>()
      let settled = DispatchSemaphore(value: 0)
      let done = DispatchSemaphore(value: 0)
      Thread {
        // Racing reads while the other thread settles: each is nil or the outcome, nothing else.
        for _ in 0..<20 where promise.settledResult.map({ $0 != .success(trial) }) == true {
          wrong.increment()
        }
        settled.wait()
        if promise.settledResult != .success(trial) { stale.increment() }
        done.signal()
      }.start()
      promise.succeed(trial)
      settled.signal()
      done.wait()
    }
    #expect(stale.value == 0)
    #expect(wrong.value == 0)
  }

  @Test("setFailureType(to:) types a promise that cannot fail for a chain that can, and passes requests on")
  func setFailureType() {
    let seen = Log<Result<String, TestError>>()
    let never = ResultPromise<Int, Never>()
    let typed = never.setFailureType(to: TestError.self)
      .then { $0 > 0 ? .success("\($0)") : .failure(.boom) }
    #expect(staticType(of: typed) == ResultPromise<String, TestError>.self)
    typed.await(seen.append)
    never.succeed(1)
    #expect(seen.values == [.success("1")])
    let stops = Counter()
    let work = ResultPromise<Int, Never> { done, onCancel in
      onCancel {
        stops.increment()
        done(.success(0))
      }
    }
    let chained = work.setFailureType(to: TestError.self).map { $0 + 1 }
    chained.cancel()
    #expect(stops.value == 1)
    #expect(chained.settledResult == .success(1))
  }

  // MARK: What migrants reach for

  @Test("validate passes a value that passes the check and fails with its failure otherwise")
  func validateChecksTheValue() {
    let seen = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 4).validate(else: .boom) { $0.isMultiple(of: 2) }.await(seen.append)
    ResultPromise<Int, TestError>(value: 5).validate(else: .boom) { $0.isMultiple(of: 2) }.await(seen.append)
    #expect(seen.values == [.success(4), .failure(.boom)])
  }

  @Test("validate and compactMap evaluate their failure only when it is the outcome, and skip on a failure")
  func failureEvaluatedOnlyAsTheOutcome() {
    let evaluated = Counter()
    let checked = Counter()
    @Sendable func failure(_ code: Int) -> TestError {
      evaluated.increment()
      return .other(code)
    }
    let seen = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 1).validate(else: failure(1)) { _ in true }.await(seen.append)
    ResultPromise<Int, TestError>(value: 2).compactMap(else: failure(2)) { $0 * 10 }.await(seen.append)
    #expect(evaluated.value == 0, "a value that passes never evaluates the failure")
    let input = ResultPromise<Int, TestError>()
    input.validate(else: failure(3)) { _ in
      checked.increment()
      return false
    }.await(seen.append)
    input.compactMap(else: failure(4)) { _ -> Int? in nil }.await(seen.append)
    #expect(evaluated.value == 0, "nothing is evaluated before the input settles")
    input.succeed(0)
    #expect(evaluated.value == 2)
    ResultPromise<Int, TestError>(error: .boom).validate(else: failure(5)) { _ in
      checked.increment()
      return false
    }.await(seen.append)
    ResultPromise<Int, TestError>(error: .boom).compactMap(else: failure(6)) { $0 }.await(seen.append)
    #expect(evaluated.value == 2, "a failure passes on without the check or the failure")
    #expect(checked.value == 1)
    #expect(
      seen.values == [
        .success(1), .success(20), .failure(.other(3)), .failure(.other(4)), .failure(.boom), .failure(.boom),
      ])
  }

  @Test("compactMap transforms the value, and a nil fails with its failure")
  func compactMapTurnsNilIntoFailure() {
    let seen = Log<Result<Int, TestError>>()
    ResultPromise<String, TestError>(value: "42").compactMap(else: .boom) { Int($0) }.await(seen.append)
    ResultPromise<String, TestError>(value: "x").compactMap(else: .boom) { Int($0) }.await(seen.append)
    // A value that is itself optional: only the step's own nil is a failure.
    ResultPromise<Int?, TestError>(value: nil).compactMap(else: .other(1)) { Optional($0) }
      .await { seen.append($0.map { $0 ?? -1 }) }
    #expect(seen.values == [.success(42), .failure(.boom), .success(-1)])
  }

  @Test("validate and compactMap sit in then, map and mapError chains without annotations")
  func checksInOrdinaryChains() {
    let seen = Log<Result<String, AppError>>()
    let chain = ResultPromise<String, TestError>(value: "21")
      .compactMap(else: .boom) { Int($0) }
      .map { $0 * 2 }
      .validate(else: .other(1)) { $0 > 0 }
      .then { .success("\($0)") }
      .mapError { AppError.wrapped($0) }
    #expect(staticType(of: chain) == ResultPromise<String, AppError>.self)
    chain.await(seen.append)
    ResultPromise<String, TestError>(value: "-1").compactMap(else: .boom) { Int($0) }.validate(
      else: .other(2)
    ) { $0 > 0 }
    .map { "\($0)" }.mapError { AppError.wrapped($0) }.await(seen.append)
    #expect(seen.values == [.success("42"), .failure(.wrapped(.other(2)))])
  }

  @Test("alwaysAsync waits for the cleanup on success and on failure, then passes the same result on")
  func alwaysAsyncWaitsForCleanup() {
    for outcome in [Result<Int, TestError>.success(7), .failure(.boom)] {
      let input = ResultPromise<Int, TestError>()
      let cleanup = ResultPromise<Void, Never>()
      let cleaned = Log<Result<Int, TestError>>()
      let seen = Log<Result<Int, TestError>>()
      let after = input.alwaysAsync { result in
        cleaned.append(result)
        return cleanup
      }
      after.await(seen.append)
      #expect(cleaned.values.isEmpty)
      input.fulfil(with: outcome)
      #expect(cleaned.values == [outcome], "the cleanup starts with the result")
      #expect(after.isPending, "and the result waits for it")
      cleanup.succeed(())
      #expect(seen.values == [outcome])
    }
  }

  @Test("a request reaches alwaysAsync's input while it is pending, and never its cleanup")
  func alwaysAsyncShieldsItsCleanup() {
    let inputStops = Counter()
    let cleanupStops = Counter()
    let input = ResultPromise<Int, TestError> { done, onCancel in
      onCancel {
        inputStops.increment()
        done(.failure(.boom))
      }
    }
    let first = input.alwaysAsync { _ in ResultPromise(value: ()) }
    first.cancel()
    #expect(inputStops.value == 1)
    #expect(first.settledResult == .failure(.boom))

    let closing = Locked<(@Sendable (Result<Void, Never>) -> Void)?>(nil)
    let settled = ResultPromise<Int, TestError>(value: 3)
    let second = settled.alwaysAsync { _ in
      ResultPromise<Void, Never> { done, onCancel in
        closing.withLock { $0 = done }
        onCancel { cleanupStops.increment() }
      }
    }
    #expect(second.isPending)
    second.cancel()
    #expect(cleanupStops.value == 0, "a running cleanup is shielded from the request")
    #expect(second.isPending, "the cleanup decides when it ends")
    closing.withLock { $0 }?(.success(()))
    #expect(second.settledResult == .success(3), "and the result is still the input's")

    // A request that came while the input was pending (and the input ignored it) does not reach the
    // cleanup that starts later either.
    let lateStops = Counter()
    let closingLate = Locked<(@Sendable (Result<Void, Never>) -> Void)?>(nil)
    let ignoring = ResultPromise<Int, TestError>()
    let third = ignoring.alwaysAsync { _ in
      ResultPromise<Void, Never> { done, onCancel in
        closingLate.withLock { $0 = done }
        onCancel { lateStops.increment() }
      }
    }
    third.cancel()
    ignoring.succeed(4)
    #expect(lateStops.value == 0, "the cleanup never hears the earlier request")
    #expect(third.isPending)
    closingLate.withLock { $0 }?(.success(()))
    #expect(third.settledResult == .success(4))
  }

  @Test("init(catching:) settles at once with what the body returns or throws")
  func initCatching() {
    let ran = Counter()
    let parsed = ResultPromise(catching: { () throws(TestError) -> Int in
      ran.increment()
      return 42
    })
    #expect(ran.value == 1)
    // A closure that throws names its error type: Swift infers `any Error` from a `throw` otherwise.
    let failed = ResultPromise(catching: { () throws(TestError) -> Int in throw .boom })
    #expect(staticType(of: parsed) == ResultPromise<Int, TestError>.self)
    #expect(parsed.settledResult == .success(42))
    #expect(failed.settledResult == .failure(.boom))
    let untyped = ResultPromise(catching: { try JSONLikeParser.parse("x") })
    #expect(staticType(of: untyped) == ResultPromise<Int, any Error>.self)
    #expect(untyped.settledResult.map { (try? $0.get()) == nil } == true)
  }
}

/// A parser that throws an untyped error, as most throwing APIs do.
private enum JSONLikeParser {
  struct Invalid: Error {}
  static func parse(_ text: String) throws -> Int {
    guard let number = Int(text) else { throw Invalid() }
    return number
  }
}
