// Time on the main-actor view: `timeout` for a `MainActorPromise`, on a clock or on Dispatch.
//
// The view's other operations are in the main-actor file; this one is made from the timers of the timing
// file, so it is a family of its own, and the timing file needs nothing of the view. It is
// `ResultPromise.timeout` over the same wait, delivered on the main actor like every step of the view.
//
// This file needs the core file, `ResultPromise+MainActor.swift`, `ResultPromise+Timing.swift` and
// `ResultPromise+Cancellation.swift` beside it.

import Dispatch

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
  /// As ``ResultPromise/timeout(_:failure:clock:file:line:)``, for any `Success`: the deadline is `duration` after
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
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of this promise's result, or of `failure` after `duration`.
  @MainActor @available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
  public func timeout<C: Clock<Duration>>(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure,
    clock: C = ContinuousClock(), file: StaticString = #fileID, line: UInt = #line
  ) -> MainActorPromise<Success, Failure> {
    MainActorPromise(promise._timeout({ _wait(duration, on: clock, $0) }, failure: failure, at: file, line))
  }

  /// Fails with `failure` on the main actor unless this promise settles within `interval`, on a Dispatch
  /// timer: the form for systems older than iOS 16, macOS 13, tvOS 16 and watchOS 9.
  ///
  /// ```swift
  /// store.band(id).onMainActor
  ///     .timeout(.seconds(10), failure: .offline)   // on iOS 13 to 15, this form
  ///     .await { result in self.state = .loaded(result) }
  /// ```
  ///
  /// As ``timeout(_:failure:clock:file:line:)``, measured by `DispatchTime` from this call; `.never` never fires.
  /// Where the `Duration` form is available, a call that both could take (`.seconds(10)`) is that form.
  /// - Parameters:
  ///   - interval: How long to wait for this promise.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout wins.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of this promise's result, or of `failure` after `interval`.
  @MainActor @_disfavoredOverload
  public func timeout(
    _ interval: DispatchTimeInterval, failure: @autoclosure @escaping @Sendable () -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) -> MainActorPromise<Success, Failure> {
    MainActorPromise(promise._timeout({ _wait(interval, $0) }, failure: failure, at: file, line))
  }
}
