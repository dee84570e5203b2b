// Time: postponing a success, giving up after a while, and trying again — on any clock.
//
// Each operator takes a `Clock` whose `Duration` is `Swift.Duration`: `ContinuousClock()` by default,
// a test clock in tests, so a test advances time by hand instead of waiting.
//
// Every timed part is one shape, `_timer`: the deadline is read from the clock when the operator asks
// for it (when `timeout` or `after` is called, when `delay`'s input succeeds, when `retry`'s attempt
// fails), then a task sleeps until it. So the time that task waits to start never pushes the deadline
// back. What the timer settles is delivered where that task runs: the global concurrent executor, Swift's
// shared pool of threads — code that blocks that pool while it waits (a semaphore wait in a synchronous
// test) keeps the timer from firing. A timer is cancelled as soon as the outcome is decided, so it holds
// nothing — not the promise, not the `failure` closure — once it is no longer needed. Its sleep ends in
// one of three ways: the deadline comes (it fires); its own task is cancelled (it does nothing); or the
// clock fails for any other reason (it fires, as if the deadline had come: nothing waits forever on a
// broken clock). A deadline further away than `_Timer.longestWait` (2^40 seconds, about 35,000 years)
// means "never": the timer then waits only to be cancelled, on no clock at all, since clocks trap on
// deadlines they cannot represent (`ContinuousClock` does from about 2^63 seconds).
//
// `timeout` decides its outcome once: the source's result and the timer race to claim it
// (`_TimeoutTarget`), and only the timer that wins evaluates `failure`.
//
// This file needs the core file, `ResultPromise+MainActor.swift` (for `MainActorPromise.timeout`) and
// `ResultPromise+Concurrency.swift` (a timer that never fires waits there to be cancelled) beside it. Its
// operators need `Clock` and `Duration`: iOS 16, macOS 13, tvOS 16 or watchOS 9 (any visionOS); the rest of
// the library needs only iOS 13, macOS 10.15, tvOS 13 or watchOS 6.

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
nonisolated extension ResultPromise where Success: Sendable {
  /// Postpones a success by `duration` on `clock`; a failure passes on at once.
  ///
  /// ```swift
  /// save(draft).delay(.milliseconds(300)).onSuccess { _ in hideSavedBadge() }
  /// ```
  ///
  /// The delayed success is delivered from a task on the global concurrent executor, once `clock` has
  /// advanced by `duration` from the moment this promise succeeded. Needs iOS 16, macOS 13, tvOS 16 or
  /// watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back. Zero or less still passes through that task; more
  ///     than 2^40 seconds (about 35,000 years) holds it back for ever.
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
  /// It succeeds from a task on the global concurrent executor, `duration` after this call. Needs iOS 16,
  /// macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait; more than 2^40 seconds (about 35,000 years) means never.
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
  /// The deadline is `duration` after this call. The returned promise settles exactly once: with this
  /// promise's result if it comes first (delivered where that result is), otherwise with `failure` from a
  /// task on the global concurrent executor. `failure` is evaluated only then, once the timeout has won.
  /// A result that arrives after the timeout is dropped; the work behind this promise is not cancelled.
  /// Once the result has come, the timer is cancelled, and it releases the returned promise and `failure`
  /// (with what it captures) at once, not at the deadline. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait for this promise; more than 2^40 seconds (about 35,000 years) means
  ///     never.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout wins.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A promise of this promise's result, or of `failure` after `duration`.
  @inlinable
  public func timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure,
    clock: C = ContinuousClock()
  ) -> ResultPromise<Success, Failure> {
    _timeout(duration, failure: failure, clock: clock)
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
  /// global concurrent executor; there is no wait after the last failure. A clock whose sleep fails ends
  /// that wait early rather than never. Each attempt gets a fresh
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
nonisolated extension MainActorPromise {
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
  /// As ``ResultPromise/timeout(_:failure:clock:)``, for any `Success`: the deadline is `duration` after
  /// this call, and the returned view settles exactly once, with this promise's result if it comes first,
  /// otherwise with `failure`; either is delivered on the main actor, like every step of the view. The
  /// moment decides: once the timer has fired, a result that settles while the failure is on its way
  /// to the main actor does not win; once the result has come, the timer is cancelled, releases what it
  /// held and never evaluates `failure`. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait for this promise; more than 2^40 seconds (about 35,000 years) means
  ///     never.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout wins.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A view of a promise of this promise's result, or of `failure` after `duration`.
  @MainActor
  public func timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure,
    clock: C = ContinuousClock()
  ) -> MainActorPromise<Success, Failure> {
    MainActorPromise(promise._timeout(duration, failure: failure, clock: clock))
  }
}

// MARK: - Timers (internal)

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
nonisolated extension ResultPromise {
  /// The timeout of both views, for any `Success`: the first of the source's result and the timer to
  /// claim the outcome settles the returned promise. The value never reaches the timer's task.
  @inlinable func _timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @escaping @Sendable () -> Failure, clock: C
  ) -> ResultPromise<Success, Failure> {
    let target = _TimeoutTarget(ResultPromise<Success, Failure>._pending())
    let timer = _timer(after: duration, on: clock) {
      if target.claim() { target.next.fulfil(with: .failure(failure())) }
    }
    self._await { result in
      if target.claim() { target.next.fulfil(with: result) }
      timer.cancel()
    }
    return target.next
  }
}

/// The promise a timeout settles, and whether its outcome has been claimed.
///
/// `@unchecked Sendable`: `claimed` is only read and written under the lock; `next` is handed to the
/// timer's task only to settle it with a failure there, so a value that is not `Sendable` never crosses
/// to that task (the source's result settles `next` where the source settles).
@usableFromInline final nonisolated class _TimeoutTarget<Success, Failure: Error>: @unchecked Sendable {
  @usableFromInline let next: ResultPromise<Success, Failure>
  @usableFromInline var claimed = false
  @inlinable init(_ next: ResultPromise<Success, Failure>) { self.next = next }

  /// `true` for the first caller only: it decides the outcome.
  @inlinable func claim() -> Bool {
    _Lock(for: self).withLock {
      defer { claimed = true }
      return !claimed
    }
  }
}

/// Runs `fire` in a task once `duration` has passed on `clock`, counted from now, unless the returned
/// task is cancelled first. A cancelled timer ends at once and releases `fire` with everything it
/// captures; a clock that fails otherwise fires it early; a duration over `_Timer.longestWait` never
/// fires it.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@inlinable @discardableResult nonisolated func _timer<C: Clock<Duration>>(
  after duration: Duration, on clock: C, _ fire: @escaping @Sendable () -> Void
) -> Task<Void, Never> {
  let deadline = duration <= _Timer.longestWait ? clock.now.advanced(by: Swift.max(duration, .zero)) : nil
  return Task {
    do {
      if let deadline {
        try await clock.sleep(until: deadline, tolerance: nil)
      } else {
        return await _Timer.untilCancelled()  // never fires
      }
    } catch {
      if Task.isCancelled { return }  // the outcome was decided first
    }
    fire()
  }
}

/// The limits of a timer.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@usableFromInline nonisolated enum _Timer {
  /// The longest wait a timer measures; a longer one means never. Far beyond any real wait, and far
  /// within what clocks represent.
  @inlinable static var longestWait: Duration { .seconds(1 << 40) }

  /// Suspends until the current task is cancelled. No clock is asked to sleep meanwhile, so nothing is
  /// left scheduled once it has been (a cancelled `Task.sleep` leaves its job queued until its deadline).
  @usableFromInline static func untilCancelled() async {
    _ = await _AbandonableWait<Never>().value()
  }
}
