import Dispatch
import ResultPromise
import Testing

/// On the real clock, timing tests assert lower bounds on time only, never upper bounds: this machine is
/// shared and noisy. On a `ManualClock` they are exact and wait for nothing real.
@Suite("Timing: delay, after, timeout, retry")
struct TimingTests {
  let clock = ContinuousClock()

  // MARK: On a manual clock: exact, no real waiting

  @Test("timeout fails exactly at its deadline and not a nanosecond before")
  func timeoutAtDeadline() async {
    let manual = ManualClock()
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.seconds(30), failure: .other(408), clock: manual)
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(30) - .nanoseconds(1))
    #expect(manual.sleepers == 1, "the timer is still asleep")
    #expect(timed.isPending)
    manual.advance(by: .nanoseconds(1))
    #expect(await timed.result == .failure(.other(408)))
    #expect(source.succeed(1))
    #expect(await timed.result == .failure(.other(408)))
  }

  @Test("a source that settles first wins, and the timer stops sleeping at once")
  func sourceBeatsTimeout() async {
    let manual = ManualClock()
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.seconds(30), failure: .boom, clock: manual)
    await eventually { manual.sleepers == 1 }
    source.succeed(7)
    #expect(await timed.result == .success(7))
    await eventually("the cancelled timer leaves the clock") { manual.sleepers == 0 }
    manual.advance(by: .seconds(60))
    #expect(await timed.result == .success(7))
  }

  @Test("delay delivers a success exactly at the deadline and a failure at once")
  func delayOnManualClock() async {
    let manual = ManualClock()
    let delayed = ResultPromise<Int, TestError>(value: 1).delay(.seconds(5), clock: manual)
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(5) - .nanoseconds(1))
    #expect(manual.sleepers == 1)
    #expect(delayed.isPending)
    manual.advance(by: .nanoseconds(1))
    #expect(await delayed.result == .success(1))
    let failed = ResultPromise<Int, TestError>(error: .boom).delay(.seconds(5), clock: manual)
    #expect(!failed.isPending)
    #expect(manual.sleepers == 0)
    let after = ResultPromise<String, Never>.after(.seconds(2), value: "tick", clock: manual)
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(2))
    #expect(await after.value == "tick")
  }

  @Test("retry waits the given delay between attempts and stops after the last one")
  func retryOnManualClock() async {
    let manual = ManualClock()
    let attempts = Counter()
    let retried = ResultPromise<Int, TestError>.retry(attempts: 3, delay: .seconds(2), clock: manual) {
      attempts.increment()
      return ResultPromise(error: .other(attempts.value))
    }
    #expect(attempts.value == 1, "the first attempt starts at once")
    for attempt in 2...3 {
      await eventually { manual.sleepers == 1 }
      manual.advance(by: .seconds(2) - .nanoseconds(1))
      #expect(attempts.value == attempt - 1)
      manual.advance(by: .nanoseconds(1))
      await eventually { attempts.value == attempt }
    }
    #expect(await retried.result == .failure(.other(3)))
    #expect(manual.sleepers == 0, "no wait after the last failure")
    #expect(attempts.value == 3)
  }

  // MARK: Nothing outlives its use

  @Test("timeout releases its promise and its failure's captures once the source has settled")
  func timeoutReleasesWhenSourceSettles() async {
    let manual = ManualClock()
    let source = ResultPromise<Int, TestError>()
    let results = Log<Result<Int, TestError>>()
    let captured: Watched
    let timed: Watched
    do {
      let tracked = Tracked()
      captured = Watched(tracked)
      let promise = source.timeout(.seconds(3600), failure: TestError.capturing(tracked), clock: manual)
      timed = Watched(promise)
      promise.await(results.append)
      await eventually { manual.sleepers == 1 }
    }
    #expect(!captured.isReleased, "the pending timeout holds its failure")
    source.succeed(1)
    #expect(results.values == [.success(1)])
    await eventually("the failure closure is released") { captured.isReleased }
    await eventually("the returned promise is released") { timed.isReleased }
  }

  @Test("timeout on the real clock with a deadline in the distant future releases everything once settled")
  func timeoutReleasesWithFarDeadline() async {
    let source = ResultPromise<Int, TestError>()
    let captured: Watched
    let timed: Watched
    do {
      let tracked = Tracked()
      captured = Watched(tracked)
      let promise = source.timeout(.seconds(Int64.max), failure: TestError.capturing(tracked))
      timed = Watched(promise)
      promise.await { _ in }
    }
    source.succeed(1)
    await eventually("the failure closure is released") { captured.isReleased }
    await eventually("the returned promise is released") { timed.isReleased }
  }

  @Test("delay and retry hold nothing once they have settled")
  func delayAndRetryRelease() async {
    let manual = ManualClock()
    let delayed: Watched
    let captured: Watched
    do {
      let promise = ResultPromise<Int, TestError>(value: 1).delay(.seconds(1), clock: manual)
      delayed = Watched(promise)
      let tracked = Tracked()
      captured = Watched(tracked)
      let retried = ResultPromise<Int, TestError>.retry(attempts: 2, delay: .seconds(1), clock: manual) {
        _ = tracked
        return ResultPromise(error: .boom)
      }
      await eventually { manual.sleepers == 2 }
      manual.advance(by: .seconds(1))
      #expect(await promise.result == .success(1))
      #expect(await retried.result == .failure(.boom))
    }
    await eventually("delay's promise is released") { delayed.isReleased }
    await eventually("retry's make closure is released") { captured.isReleased }
  }

  // MARK: On the main actor

  @Test("onMainActor.timeout fails on the main actor for a non-Sendable value, or passes it on in time")
  @MainActor func mainActorTimeout() async {
    let manual = ManualClock()
    let slow = ResultPromise<Model, TestError>()
    var seen: [String] = []
    slow.onMainActor.timeout(.seconds(10), failure: .boom, clock: manual)
      .await { result in seen.append("\(result.map(\.name)) on main: \(isOnMainQueue())") }
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(10))
    await waitOnMainActor { !seen.isEmpty }
    #expect(seen == ["failure(ResultPromiseTests.TestError.boom) on main: true"])

    let fast = ResultPromise<Model, TestError> { done in
      DispatchQueue.global().async { done(.success(Model(name: "ada"))) }
    }
    let name = await fast.onMainActor.timeout(.seconds(10), failure: .boom, clock: manual).map(\.name).result
    #expect(name == .success("ada"))
    await eventually("the cancelled timer leaves the clock") { manual.sleepers == 0 }
  }

  // MARK: On the real default clock

  @Test("delay postpones a success by at least the duration")
  func delayPostponesSuccess() async {
    let start = clock.now
    let result = await ResultPromise<Int, TestError>(value: 1).delay(.milliseconds(60)).result
    #expect(result == .success(1))
    #expect(clock.now - start >= .milliseconds(60))
  }

  @Test("delay passes a failure on at once")
  func delayPassesFailureAtOnce() {
    let result = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(error: .boom).delay(.seconds(60)).await(result.append)
    #expect(result.values == [.failure(.boom)])
  }

  @Test("after succeeds with the value once the duration has passed")
  func afterSucceedsLater() async {
    let start = clock.now
    let promise = ResultPromise<String, Never>.after(.milliseconds(50), value: "tick")
    #expect(promise.isPending)
    #expect(await promise.value == "tick")
    #expect(clock.now - start >= .milliseconds(50))
  }

  @Test("a zero or negative duration still settles, on a queue")
  func nonPositiveDurations() async {
    #expect(await ResultPromise<Int, Never>.after(.zero, value: 1).value == 1)
    #expect(await ResultPromise<Int, Never>.after(.seconds(-5), value: 2).value == 2)
  }

  @Test("timeout fails with the given error when the promise does not settle in time")
  func timeoutFires() async {
    let start = clock.now
    let source = ResultPromise<Int, TestError>()
    let result = await source.timeout(.milliseconds(50), failure: .other(408)).result
    #expect(result == .failure(.other(408)))
    #expect(clock.now - start >= .milliseconds(50))
    source.succeed(1)
  }

  @Test("a result after the timeout is dropped, not delivered twice")
  func lateResultDropped() async {
    let source = ResultPromise<Int, TestError>()
    let calls = Log<Result<Int, TestError>>()
    let timed = source.timeout(.milliseconds(20), failure: .boom)
    timed.await(calls.append)
    _ = await timed.result
    #expect(source.succeed(5))
    #expect(calls.values == [.failure(.boom)])
    #expect(await timed.result == .failure(.boom))
  }

  @Test("timeout passes a result that comes in time and never evaluates its failure")
  func resultInTime() async {
    let evaluated = Counter()
    let failure: @Sendable () -> TestError = {
      evaluated.increment()
      return .boom
    }
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.milliseconds(100), failure: failure())
    source.succeed(3)
    #expect(await timed.result == .success(3))
    try? await Task.sleep(for: .milliseconds(150))
    #expect(evaluated.value == 0)
    #expect(await timed.result == .success(3))
  }

  @Test("retry stops at the first success, making a fresh promise per attempt")
  func retryStopsOnSuccess() async {
    let made = Log<ResultPromise<Int, TestError>>()
    let result = await ResultPromise<Int, TestError>.retry(attempts: 5) {
      let attempt = made.count + 1
      let promise =
        attempt < 3 ? ResultPromise<Int, TestError>(error: .other(attempt)) : ResultPromise(value: attempt)
      made.append(promise)
      return promise
    }.result
    #expect(result == .success(3))
    #expect(made.count == 3)
    #expect(Set(made.values.map(ObjectIdentifier.init)).count == 3)
  }

  @Test("retry reports the last failure after using every attempt, waiting the delay between tries")
  func retryReportsLastFailure() async {
    let start = clock.now
    let attempts = Counter()
    let result = await ResultPromise<Int, TestError>.retry(attempts: 3, delay: .milliseconds(30)) {
      attempts.increment()
      return ResultPromise(error: .other(attempts.value))
    }.result
    #expect(result == .failure(.other(3)))
    #expect(attempts.value == 3)
    #expect(clock.now - start >= .milliseconds(60))
  }

  @Test("retry stops as soon as the while predicate rejects a failure")
  func retryHonoursWhile() async {
    let attempts = Counter()
    let attempt: @Sendable () -> ResultPromise<Int, TestError> = {
      attempts.increment()
      return ResultPromise(error: attempts.value == 2 ? .boom : .other(attempts.value))
    }
    let result = await ResultPromise.retry(attempts: 10, while: { $0 != .boom }, attempt).result
    #expect(result == .failure(.boom))
    #expect(attempts.value == 2)
  }

  @Test("retry with attempts below 1 makes exactly one attempt")
  func retryAttemptsBelowOne() async {
    for attempts in [0, -3] {
      let calls = Counter()
      let result = await ResultPromise<Int, TestError>.retry(attempts: attempts) {
        calls.increment()
        return ResultPromise(error: .boom)
      }.result
      #expect(result == .failure(.boom))
      #expect(calls.value == 1)
    }
  }

  @Test("retry adopts attempts that settle later on another thread")
  func retryAsynchronousAttempts() async {
    let calls = Counter()
    let result = await ResultPromise<Int, TestError>.retry(attempts: 3) {
      calls.increment()
      let value = calls.value
      return ResultPromise { fulfil in
        DispatchQueue.global().async { fulfil(value < 2 ? .failure(.boom) : .success(value)) }
      }
    }.result
    #expect(result == .success(2))
    #expect(calls.value == 2)
  }
}

extension TestError {
  /// `.boom`, made by an expression that captures `object`, to watch an autoclosure's lifetime.
  static func capturing(_ object: Tracked) -> TestError {
    _ = object
    return .boom
  }
}
