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
    #expect(failed.settledResult == .failure(.boom))
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

  @Test("retry with backoff waits backoff(tries so far) before each further try, and never after the last")
  func retryBackoffOnManualClock() async {
    let manual = ManualClock()
    let attempts = Counter()
    let asked = Log<Int>()
    let backoff: @Sendable (Int) -> Duration = { tries in
      asked.append(tries)
      return .seconds(1 << tries)  // 2, 4, 8 seconds
    }
    let retried = ResultPromise<Int, TestError>.retry(attempts: 4, backoff: backoff, clock: manual) {
      attempts.increment()
      return ResultPromise(error: .other(attempts.value))
    }
    #expect(attempts.value == 1, "the first attempt starts at once")
    for attempt in 2...4 {
      await eventually { manual.sleepers == 1 }
      let wait = Duration.seconds(1 << (attempt - 1))
      manual.advance(by: wait - .nanoseconds(1))
      #expect(attempts.value == attempt - 1, "no try before backoff(\(attempt - 1)) has passed")
      manual.advance(by: .nanoseconds(1))
      await eventually { attempts.value == attempt }
    }
    #expect(await retried.result == .failure(.other(4)))
    #expect(asked.values == [1, 2, 3], "asked once per wait, with the tries so far")
    #expect(manual.sleepers == 0)
  }

  @Test("retry with backoff stops when while says no, and a request during a wait ends it at once")
  func retryBackoffStopsAndCancels() async {
    let manual = ManualClock()
    let attempts = Counter()
    let second: @Sendable (Int) -> Duration = { _ in .seconds(1) }
    let attempt: @Sendable () -> ResultPromise<Int, TestError> = {
      attempts.increment()
      return ResultPromise(error: attempts.value == 1 ? .other(1) : .boom)
    }
    let stopped = ResultPromise.retry(
      attempts: 5, backoff: second, clock: manual, while: { $0 != .boom }, attempt)
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(1))
    #expect(await stopped.result == .failure(.boom), "while says no to the second failure")
    #expect(attempts.value == 2)

    let tries = Counter()
    let minute: @Sendable (Int) -> Duration = { _ in .seconds(60) }
    let waiting = ResultPromise<Int, TestError>.retry(attempts: 5, backoff: minute, clock: manual) {
      tries.increment()
      return ResultPromise(error: .other(tries.value))
    }
    await eventually { manual.sleepers == 1 }
    waiting.cancel()
    #expect(waiting.settledResult == .failure(.other(1)), "the last failure, at once")
    await eventually("the wait's sleep is cancelled") { manual.sleepers == 0 }
    #expect(tries.value == 1)
  }

  // MARK: Keeping their word: deadlines from the call, clocks that fail, failure only when it wins

  @Test("the deadline counts from the call, not from when the timer's task starts (100 trials of each)")
  func deadlineFromTheCall() async {
    let manual = ManualClock()
    let sources = (0..<100).map { _ in ResultPromise<Int, TestError>() }
    let timed = sources.map { $0.timeout(.seconds(10), failure: .boom, clock: manual) }
    let delayed = (0..<100).map {
      ResultPromise<Int, TestError>(value: $0).delay(.seconds(10), clock: manual)
    }
    let after = (0..<100).map { ResultPromise<Int, TestError>.after(.seconds(10), value: $0, clock: manual) }
    let attempts = Counter()
    let retried = (0..<100).map { _ in
      ResultPromise<Int, TestError>.retry(attempts: 2, delay: .seconds(10), clock: manual) {
        attempts.increment()
        return ResultPromise(error: .boom)
      }
    }
    manual.advance(by: .seconds(10))  // at once: most timer tasks have not started yet
    let all = timed + delayed + after + retried
    await eventually("every timer fired at its deadline") { all.allSatisfy { !$0.isPending } }
    guard all.allSatisfy({ !$0.isPending }) else { return }  // awaiting the rest would hang
    for promise in timed { #expect(await promise.result == .failure(.boom)) }
    for (index, promise) in (delayed + after).enumerated() {
      #expect(await promise.result == .success(index % 100))
    }
    for promise in retried { #expect(await promise.result == .failure(.boom)) }
    #expect(attempts.value == 200, "every retry made its second attempt")
  }

  @Test("delay counts its deadline from the moment its input succeeds")
  func delayCountsFromSuccess() async {
    let manual = ManualClock()
    let source = ResultPromise<Int, TestError>()
    let delayed = source.delay(.seconds(10), clock: manual)
    manual.advance(by: .seconds(5))
    source.succeed(1)
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(10) - .nanoseconds(1))
    #expect(manual.sleepers == 1)
    #expect(delayed.isPending)
    manual.advance(by: .nanoseconds(1))
    #expect(await delayed.result == .success(1))
  }

  @Test(
    "a clock whose sleep fails with anything but the timer's own cancellation ends the wait as if the deadline had come",
    arguments: [TestError.boom as any Error, CancellationError()])
  func failingClockEndsTheWait(error: any Error) async {
    let clock = FailingClock(throwing: error)
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.seconds(10), failure: .other(408), clock: clock)
    let delayed = ResultPromise<Int, TestError>(value: 1).delay(.seconds(10), clock: clock)
    let after = ResultPromise<Int, TestError>.after(.seconds(10), value: 2, clock: clock)
    let attempts = Counter()
    let retried = ResultPromise<Int, TestError>.retry(attempts: 3, delay: .seconds(10), clock: clock) {
      attempts.increment()
      return ResultPromise(error: .other(attempts.value))
    }
    let all = [timed, delayed, after, retried]
    await eventually("nothing hangs on the broken clock") { all.allSatisfy { !$0.isPending } }
    guard all.allSatisfy({ !$0.isPending }) else { return }  // awaiting the rest would hang
    #expect(await timed.result == .failure(.other(408)))
    #expect(await delayed.result == .success(1))
    #expect(await after.result == .success(2))
    #expect(await retried.result == .failure(.other(3)))
    #expect(attempts.value == 3)
    #expect(clock.sleeps == 5, "one sleep each for timeout, delay and after, two for retry")
  }

  @Test(
    "timeout never evaluates failure when the source settles after the deadline but before the timer goes on")
  func failureNotEvaluatedWhenSourceWins() async {
    let clock = GatedClock()
    let evaluated = Counter()
    let source = ResultPromise<Int, TestError>()
    let captured: Watched
    let timed: ResultPromise<Int, TestError>
    do {
      let tracked = Tracked()
      captured = Watched(tracked)
      timed = source.timeout(.seconds(10), failure: TestError.counting(evaluated, tracked), clock: clock)
    }
    await eventually { clock.manual.sleepers == 1 }
    clock.manual.advance(by: .seconds(10))
    await eventually("the timer is past its deadline, held at the gate") { clock.woken == 1 }
    #expect(source.succeed(5))
    clock.open()
    await eventually("the timer has ended and released failure") { captured.isReleased }
    #expect(evaluated.value == 0)
    #expect(await timed.result == .success(5))
  }

  @Test("a timeout that wins evaluates failure exactly once")
  func failureEvaluatedOnceWhenTimeoutWins() async {
    let manual = ManualClock()
    let evaluated = Counter()
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.seconds(1), failure: TestError.counting(evaluated, Tracked()), clock: manual)
    manual.advance(by: .seconds(1))
    #expect(await timed.result == .failure(.boom))
    #expect(source.succeed(1), "the timeout settles its own promise, not the source")
    #expect(await timed.result == .failure(.boom))
    #expect(evaluated.value == 1)
  }

  // Only timeout here: a delay that never delivers would keep its task (and what it holds) to the end
  // of the process, which AddressSanitizer's leak check reports. Every timer waits through `_timer`.
  @Test("a deadline too far for any clock means never: timeout(.seconds(Int64.max)) neither fires nor traps")
  func farDeadlineNeverFires() async {
    let manual = ManualClock()
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.seconds(Int64.max), failure: .boom, clock: manual)
    for _ in 0..<1_000 { await Task.yield() }  // time for the timer's task to start
    manual.advance(by: .seconds(Int64.max))
    for _ in 0..<1_000 { await Task.yield() }
    #expect(timed.isPending)
    #expect(
      manual.sleepers == 0, "the timer never asked the clock to sleep until an unrepresentable deadline")
    source.succeed(3)
    #expect(await timed.result == .success(3))
  }

  @Test(
    "timeout(.seconds(Int64.max)) on the real clock sleeps without trapping and passes the source's result on"
  )
  func farDeadlineOnTheRealClock() async throws {
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(.seconds(Int64.max), failure: .boom)
    try await Task.sleep(for: .milliseconds(100))  // time for the timer's task to start its sleep
    #expect(timed.isPending)
    source.succeed(4)
    #expect(await timed.result == .success(4))
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

  @Test(
    "delay(.zero) never delivers inside the succeed that settles its input, on that thread (hundreds of tries)"
  )
  func zeroDelayDeliversFromTheTimer() async {
    // A manual clock's sleep past its deadline returns without waiting: the timer's task ends soonest.
    let manual = ManualClock()
    for counts in [
      await deliveriesInsideSucceed { $0.delay(.zero) },
      await deliveriesInsideSucceed { $0.delay(.zero, clock: manual) },
    ] {
      #expect(counts.delivered == counts.trials)
      #expect(counts.inside == 0, "delivered on the settling thread before succeed returned")
    }
  }

  @Test("retry with no delay never makes its next attempt inside the retry call, on the calling thread")
  func zeroDelayRetryTriesFromTheTimer() async {
    let manual = ManualClock()
    for counts in [
      await attemptsInsideRetry { make in ResultPromise.retry(attempts: 2, delay: .zero, make) },
      await attemptsInsideRetry { make in ResultPromise.retry(attempts: 2, delay: .zero, clock: manual, make)
      },
    ] {
      #expect(counts.made == 2 * counts.trials)
      #expect(counts.inside == 0, "the second attempt was made before retry returned")
    }
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

/// The `DispatchTimeInterval` forms, for systems older than iOS 16: the same rules on a Dispatch timer.
/// A literal such as `.milliseconds(50)` means a `Duration` where that form exists (here, always), so these
/// tests name the interval's type. Real waits, short; lower bounds on time only.
@Suite("Timing on a Dispatch timer: the forms for older systems")
struct DispatchTimingTests {
  let clock = ContinuousClock()

  @Test("delay postpones a success by at least the interval, and passes a failure on at once")
  func delay() async {
    let interval: DispatchTimeInterval = .milliseconds(50)
    let start = clock.now
    #expect(await ResultPromise<Int, TestError>(value: 1).delay(interval).result == .success(1))
    #expect(clock.now - start >= .milliseconds(50))
    let failed = ResultPromise<Int, TestError>(error: .boom).delay(.never as DispatchTimeInterval)
    #expect(failed.settledResult == .failure(.boom))
  }

  @Test(
    "a request during delay's wait keeps the deadline, unless ifCancelled was given: then it fails at once")
  func delayAndRequests() async {
    let start = clock.now
    let kept = ResultPromise<Int, TestError>(value: 1).delay(.milliseconds(50) as DispatchTimeInterval)
    kept.cancel()
    #expect(kept.isPending, "the code after a delay never runs sooner than asked")
    #expect(await kept.result == .success(1))
    #expect(clock.now - start >= .milliseconds(50))
    let evaluations = Counter()
    let tracked = Tracked()
    let ended = ResultPromise<Int, TestError>(value: 1)
      .delay(.never as DispatchTimeInterval, ifCancelled: TestError.counting(evaluations, tracked))
    #expect(ended.isPending && evaluations.value == 0)
    ended.cancel()
    #expect(ended.settledResult == .failure(.boom))
    ended.cancel()
    #expect(evaluations.value == 1)
    let finished = ResultPromise<Int, TestError>(value: 2)
      .delay(.milliseconds(1) as DispatchTimeInterval, ifCancelled: TestError.counting(evaluations, tracked))
    #expect(await finished.result == .success(2))
    finished.cancel()
    #expect(evaluations.value == 1, "a failure that is not the outcome is never evaluated")
  }

  @Test(
    "a zero delay never delivers inside the succeed that settles its input, on that thread (hundreds of tries)"
  )
  func zeroDelayDeliversFromTheTimer() async {
    let counts = await deliveriesInsideSucceed { $0.delay(.seconds(0) as DispatchTimeInterval) }
    #expect(counts.delivered == counts.trials)
    #expect(counts.inside == 0, "delivered on the settling thread before succeed returned")
  }

  @Test(
    "retry with a zero interval never makes its next attempt inside the retry call, on the calling thread")
  func zeroDelayRetryTriesFromTheTimer() async {
    let counts = await attemptsInsideRetry { make in
      ResultPromise.retry(attempts: 2, delay: .seconds(0) as DispatchTimeInterval, make)
    }
    #expect(counts.made == 2 * counts.trials)
    #expect(counts.inside == 0, "the second attempt was made before retry returned")
  }

  @Test("after succeeds with the value once the interval has passed, or fails at once on a request")
  func after() async {
    let start = clock.now
    let tick = ResultPromise<String, Never>.after(.milliseconds(50) as DispatchTimeInterval, value: "tick")
    #expect(tick.isPending)
    #expect(await tick.value == "tick")
    #expect(clock.now - start >= .milliseconds(50))
    let dismissal = ResultPromise<Int, TestError>.after(
      .seconds(60) as DispatchTimeInterval, value: 1, ifCancelled: .other(499))
    dismissal.cancel()
    #expect(dismissal.settledResult == .failure(.other(499)))
    #expect(await ResultPromise<Int, Never>.after(.seconds(-5) as DispatchTimeInterval, value: 3).value == 3)
  }

  @Test("timeout fails after the interval, drops a later result, and evaluates its failure once")
  func timeoutFires() async {
    let evaluations = Counter()
    let start = clock.now
    let source = ResultPromise<Int, TestError>()
    let timed = source.timeout(
      .milliseconds(50) as DispatchTimeInterval, failure: TestError.counting(evaluations, Tracked()))
    let seen = Log<Result<Int, TestError>>()
    timed.await(seen.append)
    #expect(await timed.result == .failure(.boom))
    #expect(clock.now - start >= .milliseconds(50))
    #expect(source.succeed(1))
    #expect(seen.values == [.failure(.boom)])
    #expect(evaluations.value == 1)
  }

  @Test(
    "a settled source always wins timeout, for zero, negative and never intervals, and nothing is evaluated")
  func settledSourceWins() async {
    let evaluations = Counter()
    for interval: DispatchTimeInterval in [.seconds(0), .nanoseconds(-5), .never, .seconds(Int.max)] {
      let timed = ResultPromise<Int, TestError>(value: 7)
        .timeout(interval, failure: TestError.counting(evaluations, Tracked()))
      #expect(await timed.result == .success(7))
    }
    try? await Task.sleep(for: .milliseconds(20))
    #expect(evaluations.value == 0)
  }

  @Test("never, and an interval longer than DispatchTime holds, mean never: no trap, no firing")
  func neverFires() async {
    for interval: DispatchTimeInterval in [.never, .seconds(Int.max), .milliseconds(Int.max)] {
      let source = ResultPromise<Int, TestError>()
      let timed = source.timeout(interval, failure: .boom)
      try? await Task.sleep(for: .milliseconds(20))
      #expect(timed.isPending)
      source.succeed(1)
      #expect(timed.settledResult == .success(1))
    }
  }

  @Test("timeout releases its failure's captures and its promise once the source has settled")
  func timeoutReleases() async {
    let source = ResultPromise<Int, TestError>()
    let (captured, timed): (Watched, Watched)
    do {
      let tracked = Tracked()
      captured = Watched(tracked)
      let promise = source.timeout(
        .seconds(3600) as DispatchTimeInterval, failure: TestError.capturing(tracked))
      timed = Watched(promise)
      promise.await { _ in }
    }
    #expect(!captured.isReleased, "the pending timeout holds its failure")
    source.succeed(1)
    await eventually("the failure closure is released") { captured.isReleased }
    await eventually("the returned promise is released") { timed.isReleased }
  }

  @Test("retry waits the delay between tries; a request during a wait reports the last failure at once")
  func retry() async {
    let attempts = Counter()
    let start = clock.now
    let result = await ResultPromise<Int, TestError>.retry(
      attempts: 3, delay: .milliseconds(20) as DispatchTimeInterval
    ) {
      attempts.increment()
      return ResultPromise(error: .other(attempts.value))
    }.result
    #expect(result == .failure(.other(3)))
    #expect(attempts.value == 3)
    #expect(clock.now - start >= .milliseconds(40))
    let tries = Counter()
    let waiting = ResultPromise<Int, TestError>.retry(attempts: 5, delay: .never as DispatchTimeInterval) {
      tries.increment()
      return ResultPromise(error: .other(tries.value))
    }
    #expect(waiting.isPending && tries.value == 1)
    waiting.cancel()
    #expect(waiting.settledResult == .failure(.other(1)))
    #expect(tries.value == 1)
  }

  @Test("retry with backoff on a Dispatch timer waits backoff(tries so far) before each further try")
  func retryBackoff() async {
    let attempts = Counter()
    let asked = Log<Int>()
    let start = clock.now
    let backoff: @Sendable (Int) -> DispatchTimeInterval = { tries in
      asked.append(tries)
      return .milliseconds(20 * tries)  // 20 ms, then 40 ms
    }
    let result = await ResultPromise<Int, TestError>.retry(attempts: 3, backoff: backoff) {
      attempts.increment()
      return ResultPromise(error: .other(attempts.value))
    }.result
    #expect(result == .failure(.other(3)))
    #expect(asked.values == [1, 2])
    #expect(clock.now - start >= .milliseconds(60))
  }
}

extension TestError {
  /// `.boom`, counting each evaluation in `counter`; captures `object`, to watch the autoclosure's lifetime.
  static func counting(_ counter: Counter, _ object: Tracked) -> TestError {
    _ = object
    counter.increment()
    return .boom
  }

  /// `.boom`, signalling `semaphore` when evaluated.
  static func signalling(_ semaphore: DispatchSemaphore) -> TestError {
    semaphore.signal()
    return .boom
  }

  /// `.boom`, made by an expression that captures `object`, to watch an autoclosure's lifetime.
  static func capturing(_ object: Tracked) -> TestError {
    _ = object
    return .boom
  }
}

/// Settles a pending source through `delayed` again and again: how many deliveries of the delayed promise
/// ran on the settling thread while its `succeed` had not returned (a delay moves them to its timer, always),
/// and how many ran at all.
func deliveriesInsideSucceed(
  _ delayed: (ResultPromise<Int, Never>) -> ResultPromise<Int, Never>
) async -> (trials: Int, inside: Int, delivered: Int) {
  let trials = TestSize.of(full: 1_000, quick: 300)
  let (inside, delivered) = (Counter(), Counter())
  let settling = Locked<ObjectIdentifier?>(nil)  // the thread inside `succeed`, while it is
  for _ in 0..<trials {
    let source = ResultPromise<Int, Never>()
    let later = delayed(source)
    later.await { _ in
      if settling.withLock({ $0 }) == currentThreadID() { inside.increment() }
      delivered.increment()
    }
    settling.withLock { $0 = currentThreadID() }
    source.succeed(1)
    settling.withLock { $0 = nil }
    _ = await later.value
  }
  return (trials, inside.value, delivered.value)
}

/// Calls `retry` (through `retrying`) with a first attempt that fails at once, again and again: how many
/// second attempts were made on the calling thread before `retry` returned (its wait moves them to its timer,
/// always), and how many attempts were made in all.
func attemptsInsideRetry(
  _ retrying: (@escaping @Sendable () -> ResultPromise<Int, TestError>) -> ResultPromise<Int, TestError>
) async -> (trials: Int, inside: Int, made: Int) {
  let trials = TestSize.of(full: 1_000, quick: 300)
  let (inside, made) = (Counter(), Counter())
  let calling = Locked<ObjectIdentifier?>(nil)  // the thread inside `retry`, while it is
  for _ in 0..<trials {
    let attempts = Counter()
    calling.withLock { $0 = currentThreadID() }
    let retried = retrying {
      attempts.increment()
      made.increment()
      if attempts.value == 2, calling.withLock({ $0 }) == currentThreadID() { inside.increment() }
      return ResultPromise(error: .boom)
    }
    calling.withLock { $0 = nil }
    _ = await retried.result
  }
  return (trials, inside.value, made.value)
}
