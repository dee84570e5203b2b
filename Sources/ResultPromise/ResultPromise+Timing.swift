// Time: postponing a success, giving up after a while, and trying again — on any clock.
//
// Each operator takes a `Clock` whose `Duration` is `Swift.Duration`: `ContinuousClock()` by default,
// a test clock in tests, so a test advances time by hand instead of waiting. The timed part is a task
// that sleeps on that clock; what it settles is delivered where that task resumes (the global
// concurrent executor, for the operators on `ResultPromise`). The value moves to that task, so `Success`
// must be `Sendable`. A timer is a task of its own, cancelled as soon as the outcome is decided, so it
// holds nothing — not the promise, not the `failure` closure — once it is no longer needed.
//
// They need `Clock` and `Duration`: iOS 16, macOS 13, tvOS 16 or watchOS 9 (any visionOS); the rest of
// the library needs only iOS 13, macOS 10.15, tvOS 13 or watchOS 6.

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension ResultPromise where Success: Sendable {
  /// Postpones a success by `duration` on `clock`; a failure passes on at once.
  ///
  /// ```swift
  /// save(draft).delay(.milliseconds(300)).onSuccess { _ in hideSavedBadge() }
  /// ```
  ///
  /// The delayed success is delivered from a task on the global concurrent executor, once `clock` has
  /// advanced by `duration`. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back. Zero or less still passes through that task.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A promise that settles like this one, a success `duration` later.
  @inlinable
  public func delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C = ContinuousClock()
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    self._await { result in
      guard case .success = result else {
        next.fulfil(with: result)
        return
      }
      _timer(after: duration, on: clock) { next.fulfil(with: result) }
    }
    return next
  }

  /// A promise that succeeds with `value` once `duration` has passed on `clock`.
  ///
  /// ```swift
  /// let tick = ResultPromise<String, Never>.after(.seconds(1), value: "tick")
  /// ```
  ///
  /// It succeeds from a task on the global concurrent executor. Needs iOS 16, macOS 13, tvOS 16 or
  /// watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait.
  ///   - value: The success value.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A promise that succeeds with `value` once `duration` has passed.
  @inlinable
  public static func after<C: Clock<Duration>>(
    _ duration: Duration, value: Success, clock: C = ContinuousClock()
  ) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value).delay(duration, clock: clock)
  }

  /// Fails with `failure` unless this promise settles within `duration` on `clock`.
  ///
  /// ```swift
  /// remote.load(id).timeout(.seconds(5), failure: .timedOut).onFailure { show($0) }
  /// ```
  ///
  /// The returned promise settles exactly once: with this promise's result if it comes in time
  /// (delivered where that result is), otherwise with `failure` from a task on the global concurrent
  /// executor. A result that arrives after the timeout is dropped; the work behind this promise is not
  /// cancelled. Once the result has come, the timer is cancelled, and it releases the returned promise
  /// and `failure` (with what it captures) at once, not at the deadline. Needs iOS 16, macOS 13, tvOS 16
  /// or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait for this promise.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout fires.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A promise of this promise's result, or of `failure` after `duration`.
  @inlinable
  public func timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure,
    clock: C = ContinuousClock()
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    let timer = _timer(after: duration, on: clock) { next.fulfil(with: .failure(failure())) }
    self._await { result in
      next.fulfil(with: result)
      timer.cancel()
    }
    return next
  }

  /// Calls `make` up to `attempts` times in all, until a promise it returns succeeds.
  ///
  /// ```swift
  /// let user = ResultPromise.retry(attempts: 3, delay: .milliseconds(200), while: { $0.isTransient }) {
  ///     remote.load(id)
  /// }
  /// ```
  ///
  /// The first attempt starts at once, on the calling thread. After a failure for which `shouldRetry`
  /// returns `true`, the next attempt starts once `clock` has advanced by `delay`, from a task on the
  /// global concurrent executor; there is no wait after the last failure. Each attempt gets a fresh
  /// promise from `make`. The result is the first success, or the last failure — after `attempts` tries,
  /// or as soon as `shouldRetry` says no. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - attempts: The number of tries in all; values below 1 count as 1.
  ///   - delay: The wait between a failure and the next try.
  ///   - clock: The clock to measure `delay` on; `ContinuousClock()` unless a test gives its own.
  ///   - shouldRetry: Whether a failure is worth another try. Defaults to always.
  ///   - make: Starts one attempt.
  /// - Returns: A promise of the first success or the last failure.
  @inlinable
  public static func retry<C: Clock<Duration>>(
    attempts: Int,
    delay: Duration = .zero,
    clock: C = ContinuousClock(),
    while shouldRetry: @escaping @Sendable (Failure) -> Bool = { _ in true },
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    let total = Swift.max(1, attempts)
    @Sendable func attempt(_ number: Int) {
      make().await { result in
        if case .failure(let error) = result, number < total, shouldRetry(error) {
          _timer(after: delay, on: clock) { attempt(number + 1) }
        } else {
          next.fulfil(with: result)
        }
      }
    }
    attempt(1)
    return next
  }
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension MainActorPromise {
  /// Fails with `failure` on the main actor unless this promise settles within `duration` on `clock`.
  ///
  /// ```swift
  /// @MainActor func load(_ id: Band.ID) {
  ///     store.band(id).onMainActor
  ///         .timeout(.seconds(10), failure: .offline)
  ///         .await { result in self.state = .loaded(result) }   // the band, or .offline after 10 s
  /// }
  /// ```
  ///
  /// As ``ResultPromise/timeout(_:failure:clock:)``, for any `Success`: the returned view settles exactly
  /// once, with this promise's result if it comes in time, otherwise with `failure`; both are delivered
  /// on the main actor, like every step of the view. Once the result has come, the timer is cancelled and
  /// releases what it held. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait for this promise.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout fires.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A view of a promise of this promise's result, or of `failure` after `duration`.
  @MainActor
  public func timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure,
    clock: C = ContinuousClock()
  ) -> MainActorPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    // The timer sleeps off the main actor, so a busy main actor does not delay its start, and hops
    // back to settle `next` there, behind the main actor's waiting work.
    let expire = _MainActorJob(next) { next.fulfil(with: .failure(failure())) }
    let timer = _timer(after: duration, on: clock) { _MainQueue.hop(expire) }
    _observe { result in
      next.fulfil(with: result)
      timer.cancel()
    }
    return MainActorPromise<Success, Failure>(next)
  }
}

/// Runs `fire` in a task once `duration` has passed on `clock`, unless the returned task is cancelled
/// first. A cancelled timer ends at once and releases `fire` with everything it captures.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@inlinable @discardableResult func _timer<C: Clock<Duration>>(
  after duration: Duration, on clock: C, _ fire: @escaping @Sendable () -> Void
) -> Task<Void, Never> {
  Task {
    do {
      try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
    } catch {
      return  // cancelled: the outcome was decided first
    }
    fire()
  }
}
