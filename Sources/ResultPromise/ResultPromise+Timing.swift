// Time: postponing a success, giving up after a while, and trying again — on any clock, or on Dispatch.
//
// Each operator comes in two forms. One takes a `Duration` and a `Clock` whose `Duration` is
// `Swift.Duration` (`ContinuousClock()` by default, a test clock in tests, so a test advances time by hand
// instead of waiting); these need iOS 16, macOS 13, tvOS 16 or watchOS 9. The other takes a
// `DispatchTimeInterval` and runs on a Dispatch timer, for the older systems the rest of the library
// supports. Where both could take a call (`.seconds(1)` is both), the `Duration` form wins wherever it is
// available: the Dispatch forms are `@_disfavoredOverload`, and overload ranking leaves out what the
// deployment target does not have.
//
// Every timed part is one shape, a *wait*: a promise that succeeds once its deadline has come, made by
// `_wait(_:on:_:)` on a clock or `_wait(_:_:)` on Dispatch. The operators are written once, over a wait
// (`_delay`, `_timeout`, `_retry`), so both forms follow the same rules. A wait is handed to the operator
// before its timer starts, and the operator registers there what the wait's end sets off: so that always runs
// where the wait ends — never on the thread that asked for the wait, inside the call that settled the input,
// even when the deadline has passed by the time the operator registers (`delay(.zero)`). The deadline is read
// when the operator asks for the wait (when `timeout` or `after` is called, when `delay`'s input succeeds,
// when `retry`'s attempt fails). On a clock, a task then sleeps until it, so the time that task waits to
// start never pushes the deadline back; what the wait settles is delivered where that task runs, the global
// concurrent executor — code that blocks that pool while it waits (a semaphore wait in a synchronous test)
// keeps the timer from firing. On Dispatch, a timer source fires on a global queue. A wait ends in one of
// three ways: the deadline comes; the clock fails (it ends as if the deadline had come: nothing waits forever
// on a broken clock); or the wait is cancelled — then it succeeds at once, on the thread that asked, and its
// task or timer is cancelled, so it holds nothing once it is no longer needed. A deadline further away than
// `_Timer.longestWait` (2^40 seconds, about 35,000 years) means "never": the task then waits only to be
// cancelled, on no clock at all, since clocks trap on deadlines they cannot represent (`ContinuousClock` does
// from about 2^63 seconds); on Dispatch, `.never` and intervals past what `DispatchTime` holds mean never
// too.
//
// Cancellation (see `cancel()`): a request during `delay`'s or `after`'s wait leaves the deadline as it is
// — the code after a delay never runs sooner than asked, and a wait has no failure of its own to report —
// unless the caller gave `ifCancelled:`, a failure with which the request ends the wait at once. `retry`
// ends its wait on a request and reports the last failure. `timeout`'s wait is its own: a request passes
// through it to its input, and the deadline holds.
//
// Deciding once: where two things race to settle a promise — `timeout`'s source and its wait, `delay`'s
// deadline and a request — the promise itself decides: the side with a failure claims it first and
// evaluates its failure only if that succeeded, so a hand `fulfil` racing it wins or loses cleanly too.
// `timeout`'s wait tries only while the source is still pending, so a source that has settled wins even
// when its observers still wait behind a callback running on its thread. A fired `timeout` withdraws its
// observer from the source at once: a long-lived source keeps nothing of the callers that gave up on it.
//
// The main-actor view's `timeout` is in `ResultPromise+MainActorTiming.swift`, so that a library that times
// out promises but never touches the main actor copies neither the view nor its floor of iOS 13.
//
// This file needs the core file and `ResultPromise+Cancellation.swift` beside it.

import Dispatch

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
  /// ``delay(_:clock:ifCancelled:file:line:)``. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back. Zero or less still passes through that task; more
  ///     than 2^40 seconds (about 35,000 years) holds it back for ever.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, a success `duration` later.
  @inlinable
  public func delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C = ContinuousClock(), file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _delay({ _wait(duration, on: clock, $0) }, ifCancelled: nil, at: file, line)
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
  /// As ``delay(_:clock:file:line:)``, except for a request (see ``cancel()``) that comes during the wait, or
  /// came before this promise succeeded in spite of it: the wait ends at once, the returned promise fails
  /// with `ifCancelled` on the thread that asked, and what follows the delay does not run its success
  /// steps. A request and the deadline decide once: whichever comes first settles the promise, and
  /// `ifCancelled` is evaluated only when it is the outcome. A returned promise fulfilled by hand stops the
  /// timer and lets go of `ifCancelled` at once. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to hold a success back; more than 2^40 seconds (about 35,000 years) holds it
  ///     back until a request.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  ///   - ifCancelled: The failure to report when a request ends the wait; evaluated only then.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, a success `duration` later, or with `ifCancelled`.
  @inlinable
  public func delay<C: Clock<Duration>>(
    _ duration: Duration, clock: C = ContinuousClock(),
    ifCancelled: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _delay({ _wait(duration, on: clock, $0) }, ifCancelled: ifCancelled, at: file, line)
  }

  /// A promise that succeeds with `value` once `duration` has passed on `clock`.
  ///
  /// ```swift
  /// let tick = ResultPromise<String, Never>.after(.seconds(1), value: "tick")
  /// ```
  ///
  /// It succeeds from a task on the global concurrent executor, `duration` after this call. A request
  /// (see ``cancel()``) leaves the deadline as it is; to end the wait at once on one, give a failure with
  /// ``after(_:value:clock:ifCancelled:file:line:)``. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait; more than 2^40 seconds (about 35,000 years) means never.
  ///   - value: The success value.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that succeeds with `value` once `duration` has passed.
  @inlinable
  public static func after<C: Clock<Duration>>(
    _ duration: Duration, value: Success, clock: C = ContinuousClock(), file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value).delay(duration, clock: clock, file: file, line: line)
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
  /// As ``after(_:value:clock:file:line:)``, except that a request (see ``cancel()``) ends the wait at once and fails
  /// the promise with `ifCancelled`, on the thread that asked. The request and the deadline decide once;
  /// `ifCancelled` is evaluated only when it is the outcome. Needs iOS 16, macOS 13, tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - duration: How long to wait; more than 2^40 seconds (about 35,000 years) means until a request.
  ///   - value: The success value.
  ///   - clock: The clock to measure `duration` on; `ContinuousClock()` unless a test gives its own.
  ///   - ifCancelled: The failure to report when a request ends the wait; evaluated only then.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that succeeds with `value` once `duration` has passed, or fails with
  ///   `ifCancelled`.
  @inlinable
  public static func after<C: Clock<Duration>>(
    _ duration: Duration, value: Success, clock: C = ContinuousClock(),
    ifCancelled: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value)._delay(
      { _wait(duration, on: clock, $0) }, ifCancelled: ifCancelled, at: file, line)
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
  /// A result that arrives after the timeout is dropped. Once the returned promise is decided — by the
  /// result, or fulfilled by hand — the timer is cancelled, and it releases the returned promise and
  /// `failure` (with what it captures) at once, not at the deadline.
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
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of this promise's result, or of `failure` after `duration`.
  @inlinable
  public func timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure,
    clock: C = ContinuousClock(), file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _timeout({ _wait(duration, on: clock, $0) }, failure: failure, at: file, line)
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
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the first success or the last failure.
  @inlinable
  public static func retry<C: Clock<Duration>>(
    attempts: Int,
    delay: Duration = .zero,
    clock: C = ContinuousClock(),
    while shouldRetry: @escaping @Sendable (Failure) -> Bool = { _ in true }, file: StaticString = #fileID,
    line: UInt = #line,
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _retry(
      attempts: attempts, waiting: { _wait(delay, on: clock, $1) }, while: shouldRetry, at: file, line, make)
  }

  /// Calls `make` up to `attempts` times in all, until a promise it returns succeeds, waiting before each
  /// further try as long as `backoff` says.
  ///
  /// ```swift
  /// // Exponential back-off with jitter: about 0.1 s, 0.2 s, 0.4 s, … between tries.
  /// let user = ResultPromise.retry(attempts: 5, backoff: { tries in
  ///     .milliseconds(100 << (tries - 1)) * Double.random(in: 0.5...1.5)
  /// }) {
  ///     remote.load(id)
  /// }
  /// ```
  ///
  /// As ``retry(attempts:delay:clock:while:file:line:_:)``, except that the wait after a failure is
  /// `backoff(triesSoFar)`: `backoff(1)` after the first try, `backoff(2)` after the second, and so on.
  /// `backoff` is called once per wait, on the thread that settled the failed try. Needs iOS 16, macOS 13,
  /// tvOS 16 or watchOS 9.
  /// - Parameters:
  ///   - attempts: The number of tries in all; values below 1 count as 1.
  ///   - backoff: The wait before the next try, given the number of tries so far (1 or more).
  ///   - clock: The clock to measure the waits on; `ContinuousClock()` unless a test gives its own.
  ///   - shouldRetry: Whether a failure is worth another try. Defaults to always.
  ///   - make: Starts one attempt.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the first success or the last failure.
  @inlinable
  public static func retry<C: Clock<Duration>>(
    attempts: Int, backoff: @escaping @Sendable (_ triesSoFar: Int) -> Duration, clock: C = ContinuousClock(),
    while shouldRetry: @escaping @Sendable (Failure) -> Bool = { _ in true }, file: StaticString = #fileID,
    line: UInt = #line,
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _retry(
      attempts: attempts, waiting: { _wait(backoff($0), on: clock, $1) }, while: shouldRetry, at: file, line,
      make
    )
  }
}

// The same operators on a Dispatch timer, for every system the library supports. `@_disfavoredOverload`:
// a call that both forms could take (`.seconds(1)`) keeps meaning the `Duration` form where it exists.
nonisolated extension ResultPromise where Success: Sendable {
  /// Postpones a success by `interval`, on a Dispatch timer; a failure passes on at once. The form for
  /// systems older than iOS 16, macOS 13, tvOS 16 and watchOS 9.
  ///
  /// ```swift
  /// save(draft).delay(.milliseconds(300)).onSuccess { _ in hideSavedBadge() }   // iOS 13 to 15
  /// ```
  ///
  /// As ``delay(_:clock:file:line:)``, measured by `DispatchTime` from the moment this promise succeeded, and
  /// delivered from a global Dispatch queue. `.never` holds a success back for ever. Where the `Duration`
  /// form is available, a call that both could take (`.milliseconds(300)`) is that form.
  /// - Parameters:
  ///   - interval: How long to hold a success back.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, a success `interval` later.
  @inlinable @_disfavoredOverload
  public func delay(
    _ interval: DispatchTimeInterval, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _delay({ _wait(interval, $0) }, ifCancelled: nil, at: file, line)
  }

  /// Postpones a success by `interval` on a Dispatch timer, or fails with `ifCancelled` at once on a
  /// request during the wait; a failure passes on at once. The form for older systems.
  ///
  /// ```swift
  /// pending?.cancel()
  /// pending = ResultPromise<String, SearchError>(value: text)
  ///     .delay(.milliseconds(300), ifCancelled: .superseded)
  ///     .thenAsync { text in api.search(text) }
  /// ```
  ///
  /// As ``delay(_:clock:ifCancelled:file:line:)``, on a Dispatch timer.
  /// - Parameters:
  ///   - interval: How long to hold a success back; `.never` holds it back until a request.
  ///   - ifCancelled: The failure to report when a request ends the wait; evaluated only then.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, a success `interval` later, or with `ifCancelled`.
  @inlinable @_disfavoredOverload
  public func delay(
    _ interval: DispatchTimeInterval, ifCancelled: @autoclosure @escaping @Sendable () -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _delay({ _wait(interval, $0) }, ifCancelled: ifCancelled, at: file, line)
  }

  /// A promise that succeeds with `value` once `interval` has passed, on a Dispatch timer. The form for
  /// older systems.
  ///
  /// ```swift
  /// let tick = ResultPromise<String, Never>.after(.seconds(1), value: "tick")
  /// ```
  ///
  /// As ``after(_:value:clock:file:line:)``: a request leaves the deadline as it is.
  /// - Parameters:
  ///   - interval: How long to wait; `.never` means never.
  ///   - value: The success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that succeeds with `value` once `interval` has passed.
  @inlinable @_disfavoredOverload
  public static func after(
    _ interval: DispatchTimeInterval, value: Success, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value).delay(interval, file: file, line: line)
  }

  /// A promise that succeeds with `value` once `interval` has passed on a Dispatch timer, or fails with
  /// `ifCancelled` at once on a request. The form for older systems.
  ///
  /// ```swift
  /// let dismissal = ResultPromise<Void, UIError>.after(.seconds(3), value: (), ifCancelled: .gone)
  /// ```
  ///
  /// As ``after(_:value:clock:ifCancelled:file:line:)``, on a Dispatch timer.
  /// - Parameters:
  ///   - interval: How long to wait; `.never` means until a request.
  ///   - value: The success value.
  ///   - ifCancelled: The failure to report when a request ends the wait; evaluated only then.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that succeeds with `value` once `interval` has passed, or fails with
  ///   `ifCancelled`.
  @inlinable @_disfavoredOverload
  public static func after(
    _ interval: DispatchTimeInterval, value: Success,
    ifCancelled: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value)._delay({ _wait(interval, $0) }, ifCancelled: ifCancelled, at: file, line)
  }

  /// Fails with `failure` unless this promise settles within `interval`, on a Dispatch timer. The form
  /// for older systems.
  ///
  /// ```swift
  /// remote.load(id).timeout(.seconds(5), failure: .timedOut).onFailure { show($0) }   // iOS 13 to 15
  /// ```
  ///
  /// As ``timeout(_:failure:clock:file:line:)``, measured by `DispatchTime` from this call, the failure delivered
  /// from a global Dispatch queue; `.never` never fires.
  /// - Parameters:
  ///   - interval: How long to wait for this promise.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout wins.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of this promise's result, or of `failure` after `interval`.
  @inlinable @_disfavoredOverload
  public func timeout(
    _ interval: DispatchTimeInterval, failure: @autoclosure @escaping @Sendable () -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _timeout({ _wait(interval, $0) }, failure: failure, at: file, line)
  }

  /// Calls `make` up to `attempts` times in all, until a promise it returns succeeds, waiting `delay`
  /// on a Dispatch timer between tries. The form for older systems.
  ///
  /// ```swift
  /// let user = ResultPromise.retry(attempts: 3, delay: .milliseconds(200)) { remote.load(id) }
  /// ```
  ///
  /// As ``retry(attempts:delay:clock:while:file:line:_:)``, each wait measured by `DispatchTime` from the failure
  /// before it.
  /// - Parameters:
  ///   - attempts: The number of tries in all; values below 1 count as 1.
  ///   - delay: The wait between a failure and the next try.
  ///   - shouldRetry: Whether a failure is worth another try. Defaults to always.
  ///   - make: Starts one attempt.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the first success or the last failure.
  @inlinable @_disfavoredOverload
  public static func retry(
    attempts: Int,
    delay: DispatchTimeInterval = .seconds(0),
    while shouldRetry: @escaping @Sendable (Failure) -> Bool = { _ in true }, file: StaticString = #fileID,
    line: UInt = #line,
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _retry(attempts: attempts, waiting: { _wait(delay, $1) }, while: shouldRetry, at: file, line, make)
  }

  /// Calls `make` up to `attempts` times in all, until a promise it returns succeeds, waiting before each
  /// further try as long as `backoff` says, on a Dispatch timer. The form for older systems.
  ///
  /// ```swift
  /// let user = ResultPromise.retry(attempts: 5, backoff: { tries in .milliseconds(100 << (tries - 1)) }) {
  ///     remote.load(id)
  /// }
  /// ```
  ///
  /// As ``retry(attempts:backoff:clock:while:file:line:_:)``, each wait measured by `DispatchTime`.
  /// - Parameters:
  ///   - attempts: The number of tries in all; values below 1 count as 1.
  ///   - backoff: The wait before the next try, given the number of tries so far (1 or more).
  ///   - shouldRetry: Whether a failure is worth another try. Defaults to always.
  ///   - make: Starts one attempt.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the first success or the last failure.
  @inlinable @_disfavoredOverload
  public static func retry(
    attempts: Int, backoff: @escaping @Sendable (_ triesSoFar: Int) -> DispatchTimeInterval,
    while shouldRetry: @escaping @Sendable (Failure) -> Bool = { _ in true }, file: StaticString = #fileID,
    line: UInt = #line,
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _retry(attempts: attempts, waiting: { _wait(backoff($0), $1) }, while: shouldRetry, at: file, line, make)
  }
}

// MARK: - Timers (internal)

nonisolated extension ResultPromise where Success: Sendable {
  /// `delay` with or without `ifCancelled`, over the waits `wait` makes (called when this promise
  /// succeeds). The returned promise's record is a dependent of this one's (or its own); the wait is not
  /// its dependent, so a request leaves it alone. With `ifCancelled`, a handler on that record and the
  /// wait's end race to take the promise: the winner settles it, and the handler ends the wait, so its
  /// timer stops at once.
  @inlinable func _delay(
    _ wait: @escaping @Sendable (_ prepare: (ResultPromise<Void, Never>) -> Void) -> Void,
    ifCancelled: (@Sendable () -> Failure)?, at file: StaticString, _ line: UInt
  ) -> ResultPromise<Success, Failure> {
    let record = _extras?.dependent(on: nil, at: _depth) as? _Cancellation ?? _Cancellation()
    let next = ResultPromise<Success, Failure>(_pending: record)._made(at: file, line, from: self)
    let place = self._await { result in
      guard case .success = result else {
        next.fulfil(with: result)
        return
      }
      wait { wait in
        record.whenSettled { [weak wait] in wait?.cancel() }  // settled by hand, it lets go of the timer
        if let ifCancelled {
          record.onCancel {
            next._fulfil(claiming: { .failure(ifCancelled()) })
          }
        }
        wait._await { _ in next.fulfil(with: result) }
      }
    }
    record.whenSettled(withdrawing: _Registration(self, at: place))
    return next
  }

  /// `retry` over the waits `wait` makes, one after each failure that is retried, given the number of
  /// tries so far. The returned promise's record adopts the current attempt, then the wait after it, so a
  /// request reaches whichever runs.
  @inlinable static func _retry(
    attempts: Int, waiting wait: @escaping @Sendable (Int, (ResultPromise<Void, Never>) -> Void) -> Void,
    while shouldRetry: @escaping @Sendable (Failure) -> Bool, at file: StaticString, _ line: UInt,
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    let record = _Cancellation()
    let next = ResultPromise<Success, Failure>(_pending: record)._made(at: file, line)
    let total = Swift.max(1, attempts)
    @Sendable func attempt(_ number: Int) {
      let current = make()
      record.adopt(current._extras, at: current._depth, for: 0)  // a request now reaches this attempt
      current.await { result in
        if case .failure(let error) = result, number < total, !record.isCancelled, shouldRetry(error) {
          wait(number) { wait in
            record.adopt(wait._extras, at: wait._depth, for: 0)  // a request now ends the wait
            wait._await { _ in
              if record.isCancelled { next.fulfil(with: result) } else { attempt(number + 1) }
            }
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

nonisolated extension ResultPromise {
  /// The timeout of both views and both forms, for any `Success`: the first of the source's result and the
  /// end of the wait `wait` makes to take the returned promise settles it. The value never reaches the timer.
  @inlinable func _timeout(
    _ wait: (_ prepare: (ResultPromise<Void, Never>) -> Void) -> Void,
    failure: @escaping @Sendable () -> Failure, at file: StaticString, _ line: UInt
  ) -> ResultPromise<Success, Failure> {
    let record = _extras?.dependent(on: nil, at: _depth) as? _Cancellation ?? _Cancellation()
    let next = ResultPromise<Success, Failure>(_pending: record)._made(at: file, line, from: self)
    // Held weakly: the timer must not keep a dropped source alive until the deadline.
    let source = _Registration(self, at: self._await { next.fulfil(with: $0) })
    // However `next` is decided — by the source, the timer or by hand — the timer stops, releasing `failure`,
    // and the source's observer is withdrawn.
    record.whenSettled(withdrawing: source)
    wait { wait in
      record.whenSettled { [weak wait] in wait?.cancel() }
      // Registered after the source's observer, so that a timer that fires at once withdraws it. A source that
      // has settled wins, even while its observers still wait behind a callback running on its thread.
      wait._await { _ in
        guard source.isPending else { return }
        next._fulfil(claiming: { .failure(failure()) })
      }
    }
    return next
  }
}

/// Makes a promise that succeeds once `duration` has passed on `clock`, counted from now — or at once when
/// it is cancelled (a wait has no failure to report) — and hands it to `prepare` before its task starts, so
/// that what `prepare` registers on it runs where the wait ends, never on the thread that made it. A task
/// sleeps until the deadline; a request cancels the task and succeeds the promise on the requesting thread. A
/// clock that fails ends the wait early; a duration over `_Timer.longestWait` ends it only on a request.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@inlinable nonisolated func _wait<C: Clock<Duration>>(
  _ duration: Duration, on clock: C, _ prepare: (ResultPromise<Void, Never>) -> Void
) {
  let deadline = duration <= _Timer.longestWait ? clock.now.advanced(by: Swift.max(duration, .zero)) : nil
  let record = _Cancellation()
  let wait = ResultPromise<Void, Never>(_pending: record)
  prepare(wait)
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
}

/// The limits of a timer.
@usableFromInline nonisolated enum _Timer {
  /// The longest wait a timer measures; a longer one means never. Far beyond any real wait, and far
  /// within what clocks represent.
  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  @inlinable static var longestWait: Duration { .seconds(1 << 40) }

  /// Suspends until the current task is cancelled. No clock is asked to sleep meanwhile, so nothing is
  /// left scheduled once it has been (a cancelled `Task.sleep` leaves its job queued until its deadline).
  @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  @usableFromInline static func untilCancelled() async {
    let (never, open) = AsyncStream<Never>.makeStream()  // iterating a stream ends when its task is cancelled
    for await _ in never {}
    open.finish()
  }
}

/// Makes a promise that succeeds once `interval` has passed, counted from now, on a Dispatch timer — or at
/// once when it is cancelled (a wait has no failure to report) — and hands it to `prepare` before the timer
/// starts, as the clock form does. The timer fires on a global queue; settling either way cancels it, and a
/// cancelled timer lets go of its handler, and so of the promise, at once. `.never`, and an interval longer
/// than `DispatchTime` holds, never fire.
@inlinable nonisolated func _wait(
  _ interval: DispatchTimeInterval, _ prepare: (ResultPromise<Void, Never>) -> Void
) {
  let record = _Cancellation()
  let wait = ResultPromise<Void, Never>(_pending: record)
  let timer = DispatchSource.makeTimerSource(queue: .global())
  timer.setEventHandler { wait.succeed(()) }
  timer.schedule(deadline: interval == .never ? .distantFuture : .now() + interval)
  wait._await { _ in timer.cancel() }
  prepare(wait)
  record.onCancel { wait.succeed(()) }
  timer.resume()
}
