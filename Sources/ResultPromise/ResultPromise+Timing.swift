// Time: postponing a success, giving up after a while, and trying again — on any clock.
//
// Each operator takes a `Clock` whose `Duration` is `Swift.Duration`: `ContinuousClock()` by default,
// a test clock in tests, so a test advances time by hand instead of waiting.
//
// Every timed part is one shape, `_wait`: a promise that succeeds once its deadline has come. The deadline
// is read from the clock when the operator asks for it (when `timeout` or `after` is called, when `delay`'s
// input succeeds, when `retry`'s attempt fails), then a task sleeps until it. So the time that task waits to
// start never pushes the deadline back. What the wait settles is delivered where that task runs: the
// global concurrent executor, Swift's shared pool of threads — code that blocks that pool while it waits
// (a semaphore wait in a synchronous test) keeps the timer from firing. Its sleep ends in one of three
// ways: the deadline comes; the clock fails (it ends as if the deadline had come: nothing waits forever on
// a broken clock); or the wait is cancelled — then it succeeds at once, on the thread that asked, and its
// task is cancelled, so it holds nothing once it is no longer needed. A deadline further away than
// `_Timer.longestWait` (2^40 seconds, about 35,000 years) means "never": the task then waits only to be
// cancelled, on no clock at all, since clocks trap on deadlines they cannot represent (`ContinuousClock`
// does from about 2^63 seconds).
//
// Cancellation (see `cancel()`): a wait has no failure to report, so a request ends it early and the
// operator goes on as if the deadline had come — `delay` and `after` deliver the held success at once,
// `retry` reports the last failure. `timeout` is different: its wait is its own, a request passes through
// it to its input, and the deadline holds.
//
// `timeout` decides its outcome once: the source's result and the wait race to claim it
// (`_TimeoutTarget`), and only the wait that wins evaluates `failure`.
//
// This file needs the core file, `ResultPromise+MainActor.swift` (for `MainActorPromise.timeout`),
// `ResultPromise+Concurrency.swift` (a wait that never ends by itself waits there to be cancelled) and
// `ResultPromise+Cancellation.swift` beside it. Its operators need `Clock` and `Duration`: iOS 16, macOS 13,
// tvOS 16 or watchOS 9 (any visionOS); the rest of the library needs only iOS 13, macOS 10.15, tvOS 13 or
// watchOS 6.

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
nonisolated extension ResultPromise where Success: Sendable {
  /// Postpones a success by `duration` on `clock`; a failure passes on at once.
  ///
  /// ```swift
  /// save(draft).delay(.milliseconds(300)).onSuccess { _ in hideSavedBadge() }
  /// ```
  ///
  /// The delayed success is delivered from a task on the global concurrent executor, once `clock` has
  /// advanced by `duration` from the moment this promise succeeded. The returned promise can be
  /// cancelled (see ``cancel()``): a request while it waits for this promise reaches this promise; a
  /// request during the wait ends it, and the held success is delivered at once, on the thread that asked
  /// (cancelling never invents a failure). Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back. Zero or less still passes through that task; more
  ///     than 2^40 seconds (about 35,000 years) holds it back for ever.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A promise that settles like this one, a success `duration` later.
  @inlinable
  public func delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C = ContinuousClock()
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>(_pending: _extras?.dependent(on: nil) ?? _Cancellation())
    self._await { result in
      guard case .success = result else {
        next.fulfil(with: result)
        return
      }
      let wait = _wait(duration, on: clock)
      next._extras?.adopt(wait._extras)  // a request now ends the wait
      wait._await { _ in next.fulfil(with: result) }
    }
    return next
  }

  /// A promise that succeeds with `value` once `duration` has passed on `clock`.
  ///
  /// ```swift
  /// let tick = ResultPromise<String, Never>.after(.seconds(1), value: "tick")
  /// ```
  ///
  /// It succeeds from a task on the global concurrent executor, `duration` after this call — or at once,
  /// with `value`, when it is cancelled (see ``cancel()``). Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
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
  /// A result that arrives after the timeout is dropped. Once the result has come, the timer is
  /// cancelled, and it releases the returned promise and `failure` (with what it captures) at once, not
  /// at the deadline.
  ///
  /// The returned promise is a dependent of this one (see ``cancel()``): when the timeout fires, it lets
  /// this promise go, so work that nothing else wants is asked to stop. A request on the returned promise
  /// passes on to this one and leaves the deadline in place: work that ignores the request still times
  /// out. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
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
  /// or as soon as `shouldRetry` says no.
  ///
  /// The returned promise can be cancelled (see ``cancel()``): a request during an attempt reaches that
  /// attempt's promise, and its failure is reported without another try; a request during a wait ends it,
  /// and the last failure is reported at once. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
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
    let record = _Cancellation()
    let next = ResultPromise<Success, Failure>(_pending: record)
    let total = Swift.max(1, attempts)
    @Sendable func attempt(_ number: Int) {
      let current = make()
      record.adopt(current._extras)  // a request now reaches this attempt
      current.await { result in
        if case .failure(let error) = result, number < total, !record.isCancelled, shouldRetry(error) {
          let wait = _wait(delay, on: clock)
          record.adopt(wait._extras)  // a request now ends the wait
          wait._await { _ in
            if record.isCancelled { next.fulfil(with: result) } else { attempt(number + 1) }
          }
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
    let target = _TimeoutTarget(ResultPromise<Success, Failure>(_pending: _extras?.dependent(on: nil)))
    let wait = _wait(duration, on: clock)
    wait._await { _ in
      if target.claim() { target.next.fulfil(with: .failure(failure())) }
    }
    self._await { result in
      if target.claim() { target.next.fulfil(with: result) }
      wait.cancel()  // it ends at once; the claim is taken
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

/// A promise that succeeds once `duration` has passed on `clock`, counted from now — or at once when it is
/// cancelled (a wait has no failure to report). A task sleeps until the deadline; a request cancels the
/// task and succeeds the promise on the requesting thread. A clock that fails ends the wait early; a
/// duration over `_Timer.longestWait` ends it only on a request.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@inlinable nonisolated func _wait<C: Clock<Duration>>(
  _ duration: Duration, on clock: C
) -> ResultPromise<Void, Never> {
  let deadline = duration <= _Timer.longestWait ? clock.now.advanced(by: Swift.max(duration, .zero)) : nil
  let record = _Cancellation()
  let wait = ResultPromise<Void, Never>(_pending: record)
  let task = Task {
    if let deadline {
      try? await clock.sleep(until: deadline, tolerance: nil)
    } else {
      await _Timer.untilCancelled()
    }
    wait.succeed(())
  }
  // Settling drops the handler, and with it the task and the promise it holds.
  record.onCancel {
    task.cancel()
    wait.succeed(())
  }
  return wait
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
