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
// Cancellation (see `cancel()`): a request during `delay`'s or `after`'s wait leaves the deadline as it is
// — the code after a delay never runs sooner than asked, and a wait has no failure of its own to report —
// unless the caller gave `ifCancelled:`, a failure with which the request ends the wait at once. `retry`
// ends its wait on a request and reports the last failure. `timeout`'s wait is its own: a request passes
// through it to its input, and the deadline holds.
//
// Deciding once: where two things race to settle a promise — `timeout`'s source and its wait, `delay`'s
// deadline and a request — both try to take one claim (`_Claim`), and only the winner settles it and
// evaluates its failure. `timeout`'s wait claims only while the source is still pending, so a source that
// has settled wins even when its observers still wait behind a callback running on its thread.
//
// This file needs the core file, `ResultPromise+MainActor.swift` (for `MainActorPromise.timeout`) and
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
  /// cancelled (see ``cancel()``): a request while it waits for this promise reaches this promise. A
  /// request during the wait leaves the deadline as it is — the code that follows never runs sooner than
  /// asked — so to end the wait at once on a request, give a failure with
  /// ``delay(_:clock:ifCancelled:)``. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back. Zero or less still passes through that task; more
  ///     than 2^40 seconds (about 35,000 years) holds it back for ever.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  /// - Returns: A promise that settles like this one, a success `duration` later.
  @inlinable
  public func delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C = ContinuousClock()
  ) -> ResultPromise<Success, Failure> {
    _delay(duration, clock: clock, ifCancelled: nil)
  }

  /// Postpones a success by `duration` on `clock`, or fails with `ifCancelled` at once on a request
  /// during the wait; a failure passes on at once.
  ///
  /// ```swift
  /// // Search 300 ms after the last keystroke; a newer keystroke cancels the older search.
  /// pending?.cancel()
  /// pending = ResultPromise<String, SearchError>(value: text)
  ///     .delay(.milliseconds(300), ifCancelled: .superseded)
  ///     .thenAsync { text in api.search(text) }
  /// ```
  ///
  /// As ``delay(_:clock:)``, except for a request (see ``cancel()``) that comes during the wait, or
  /// came before this promise succeeded in spite of it: the wait ends at once, the returned promise fails
  /// with `ifCancelled` on the thread that asked, and what follows the delay does not run its success
  /// steps. A request and the deadline decide once: whichever comes first settles the promise, and
  /// `ifCancelled` is evaluated only when it is the outcome. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back; more than 2^40 seconds (about 35,000 years) holds it
  ///     back until a request.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  ///   - ifCancelled: The failure to report when a request ends the wait; evaluated only then.
  /// - Returns: A promise that settles like this one, a success `duration` later, or with `ifCancelled`.
  @inlinable
  public func delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C = ContinuousClock(),
    ifCancelled: @autoclosure @escaping @Sendable () -> Failure
  ) -> ResultPromise<Success, Failure> {
    _delay(duration, clock: clock, ifCancelled: ifCancelled)
  }

  /// A promise that succeeds with `value` once `duration` has passed on `clock`.
  ///
  /// ```swift
  /// let tick = ResultPromise<String, Never>.after(.seconds(1), value: "tick")
  /// ```
  ///
  /// It succeeds from a task on the global concurrent executor, `duration` after this call. A request
  /// (see ``cancel()``) leaves the deadline as it is; to end the wait at once on one, give a failure with
  /// ``after(_:value:clock:ifCancelled:)``. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
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

  /// A promise that succeeds with `value` once `duration` has passed on `clock`, or fails with
  /// `ifCancelled` at once on a request.
  ///
  /// ```swift
  /// // Dismiss the banner in 3 seconds, unless the screen goes away first.
  /// let dismissal = ResultPromise<Void, UIError>.after(.seconds(3), value: (), ifCancelled: .gone)
  /// dismissal.onSuccess { hideBanner() }
  /// dismissal.cancel()   // hideBanner() never runs
  /// ```
  ///
  /// As ``after(_:value:clock:)``, except that a request (see ``cancel()``) ends the wait at once and fails
  /// the promise with `ifCancelled`, on the thread that asked. The request and the deadline decide once;
  /// `ifCancelled` is evaluated only when it is the outcome. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait; more than 2^40 seconds (about 35,000 years) means until a request.
  ///   - value: The success value.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  ///   - ifCancelled: The failure to report when a request ends the wait; evaluated only then.
  /// - Returns: A promise that succeeds with `value` once `duration` has passed, or fails with
  ///   `ifCancelled`.
  @inlinable
  public static func after<C: Clock<Duration>>(
    _ duration: Duration, value: Success, clock: C = ContinuousClock(),
    ifCancelled: @autoclosure @escaping @Sendable () -> Failure
  ) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value)._delay(duration, clock: clock, ifCancelled: ifCancelled)
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
  /// Only a promise still pending when the deadline passes times out: one that has settled wins, for any
  /// `duration` (zero and negative too), also while its observers wait behind a callback running on its
  /// thread — as when `timeout` is called from inside one.
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
      record.adopt(current._extras, at: current._depth, for: 0)  // a request now reaches this attempt
      current.await { result in
        if case .failure(let error) = result, number < total, !record.isCancelled, shouldRetry(error) {
          let wait = _wait(delay, on: clock)
          record.adopt(wait._extras, at: wait._depth, for: 0)  // a request now ends the wait
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
  /// held and never evaluates `failure`. A promise that has settled before the deadline always wins, for
  /// any `duration`, zero and negative too. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
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
nonisolated extension ResultPromise where Success: Sendable {
  /// `delay` with or without `ifCancelled`. The returned promise's record is a dependent of this one's (or
  /// its own); the wait is not its dependent, so a request leaves it alone. With `ifCancelled`, a handler
  /// on that record and the wait's end race for one claim: the winner settles the promise, and a winning
  /// handler ends the wait, so the clock's sleep stops at once.
  @inlinable func _delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C, ifCancelled: (@Sendable () -> Failure)?
  ) -> ResultPromise<Success, Failure> {
    let record = _extras?.dependent(on: nil, at: _depth) as? _Cancellation ?? _Cancellation()
    let next = ResultPromise<Success, Failure>(_pending: record)
    self._await { result in
      guard case .success = result else {
        next.fulfil(with: result)
        return
      }
      let wait = _wait(duration, on: clock)
      guard let ifCancelled else { return wait._await { _ in next.fulfil(with: result) } }
      let claim = _Claim()
      record.onCancel {
        if claim.take() { next.fulfil(with: .failure(ifCancelled())) }
        wait.cancel()
      }
      wait._await { _ in
        if claim.take() { next.fulfil(with: result) }
      }
    }
    return next
  }
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
nonisolated extension ResultPromise {
  /// The timeout of both views, for any `Success`: the first of the source's result and the timer to
  /// claim the outcome settles the returned promise. The value never reaches the timer's task.
  @inlinable func _timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @escaping @Sendable () -> Failure, clock: C
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>(_pending: _extras?.dependent(on: nil, at: _depth))
    let claim = _Claim()
    let wait = _wait(duration, on: clock)
    // A source that has settled wins, even while its observers still wait behind a callback running on
    // its thread. Held weakly: the timer must not keep a dropped source alive until the deadline.
    wait._await { [weak self] _ in
      if self?.isPending != false, claim.take() { next.fulfil(with: .failure(failure())) }
    }
    self._await { result in
      if claim.take() { next.fulfil(with: result) }
      wait.cancel()  // it ends at once; the claim is taken
    }
    return next
  }
}

/// An outcome that two parties race to decide: a timeout's source and its timer, a delay's deadline and a
/// request. Only the first to `take` it settles the promise.
///
/// `@unchecked Sendable`: `taken` is only read and written under the lock.
@usableFromInline final nonisolated class _Claim: @unchecked Sendable {
  @usableFromInline var taken = false
  @inlinable init() {}

  /// `true` for the first caller only: it decides the outcome.
  @inlinable func take() -> Bool {
    _Lock(for: self).withLock {
      defer { taken = true }
      return !taken
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
    let (never, open) = AsyncStream<Never>.makeStream()  // iterating a stream ends when its task is cancelled
    for await _ in never {}
    open.finish()
  }
}
