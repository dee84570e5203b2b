import Dispatch
import ResultPromise
import Testing

/// Timing tests assert lower bounds on time only, never upper bounds: this machine is shared and noisy.
@Suite("Timing: delay, after, timeout, retry")
struct TimingTests {
  let clock = ContinuousClock()

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
