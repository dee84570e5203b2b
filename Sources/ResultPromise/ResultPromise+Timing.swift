// Time: postponing a success, giving up after a while, and trying again.
//
// These are the operators (with `receive(on:)`) that move work to a dispatch queue: the timed part
// runs on a global queue, and what it settles is delivered there like any other `fulfil`. The value
// moves to that queue's thread, so `Success` must be `Sendable`. They take a `Duration`, so they need
// iOS 16, macOS 13, tvOS 16 or watchOS 9 (any visionOS); the rest of the library needs only iOS 13,
// macOS 10.15, tvOS 13 or watchOS 6.

import Dispatch

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension ResultPromise where Success: Sendable {
  /// Postpones a success by `duration`; a failure passes on at once.
  ///
  /// ```swift
  /// save(draft).delay(.milliseconds(300)).onSuccess { _ in hideSavedBadge() }
  /// ```
  ///
  /// The delayed success is delivered on a global dispatch queue.
  ///
  /// Needs iOS 16, macOS 13, tvOS 16 or watchOS 9, for `Duration`.
  /// - Parameter duration: How long to hold a success back. Zero or less still hops to the queue.
  /// - Returns: A promise that settles like this one, a success `duration` later.
  @inlinable
  public func delay(_ duration: Duration) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    self._await { result in
      if case .success = result {
        DispatchQueue.global().asyncAfter(deadline: _deadline(after: duration)) { next.fulfil(with: result) }
      } else {
        next.fulfil(with: result)
      }
    }
    return next
  }

  /// A promise that succeeds with `value` after `duration`.
  ///
  /// ```swift
  /// let tick = ResultPromise<String, Never>.after(.seconds(1), value: "tick")
  /// ```
  ///
  /// It succeeds on a global dispatch queue.
  ///
  /// Needs iOS 16, macOS 13, tvOS 16 or watchOS 9, for `Duration`.
  /// - Parameters:
  ///   - duration: How long to wait.
  ///   - value: The success value.
  /// - Returns: A promise that succeeds with `value` once `duration` has passed.
  @inlinable
  public static func after(_ duration: Duration, value: Success) -> ResultPromise<Success, Failure> {
    ResultPromise(value: value).delay(duration)
  }

  /// Fails with `failure` unless this promise settles within `duration`.
  ///
  /// ```swift
  /// remote.load(id).timeout(.seconds(5), failure: .timedOut).onFailure { show($0) }
  /// ```
  ///
  /// The returned promise settles exactly once: with this promise's result if it comes in time
  /// (delivered where that result is), otherwise with `failure` on a global dispatch queue. A result
  /// that arrives after the timeout is dropped. The work behind this promise is not cancelled.
  ///
  /// Needs iOS 16, macOS 13, tvOS 16 or watchOS 9, for `Duration`.
  /// - Parameters:
  ///   - duration: How long to wait for this promise.
  ///   - failure: The error to fail with on timeout; evaluated only if the timeout fires.
  /// - Returns: A promise of this promise's result, or of `failure` after `duration`.
  @inlinable
  public func timeout(
    _ duration: Duration, failure: @autoclosure @escaping @Sendable () -> Failure
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    self._await { next.fulfil(with: $0) }
    DispatchQueue.global().asyncAfter(deadline: _deadline(after: duration)) {
      if next.isPending { next.fulfil(with: .failure(failure())) }
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
  /// returns `true`, the next attempt starts `delay` later on a global dispatch queue; there is no wait
  /// after the last failure. Each attempt gets a fresh promise from `make`. The result is the first
  /// success, or the last failure — after `attempts` tries, or as soon as `shouldRetry` says no.
  ///
  /// Needs iOS 16, macOS 13, tvOS 16 or watchOS 9, for `Duration`.
  /// - Parameters:
  ///   - attempts: The number of tries in all; values below 1 count as 1.
  ///   - delay: The wait between a failure and the next try.
  ///   - shouldRetry: Whether a failure is worth another try. Defaults to always.
  ///   - make: Starts one attempt.
  /// - Returns: A promise of the first success or the last failure.
  @inlinable
  public static func retry(
    attempts: Int,
    delay: Duration = .zero,
    while shouldRetry: @escaping @Sendable (Failure) -> Bool = { _ in true },
    _ make: @escaping @Sendable () -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    let total = Swift.max(1, attempts)
    @Sendable func attempt(_ number: Int) {
      make().await { result in
        if case .failure(let error) = result, number < total, shouldRetry(error) {
          DispatchQueue.global().asyncAfter(deadline: _deadline(after: delay)) { attempt(number + 1) }
        } else {
          next.fulfil(with: result)
        }
      }
    }
    attempt(1)
    return next
  }
}

/// The dispatch deadline `duration` from now; negative durations mean now, huge ones the distant future.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@inlinable func _deadline(after duration: Duration) -> DispatchTime {
  let (seconds, attoseconds) = duration.components
  guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return .now() }
  let (wholeNanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
  guard !overflow, wholeNanoseconds < Int64.max / 2 else { return .distantFuture }
  let nanoseconds = Swift.max(0, wholeNanoseconds + attoseconds / 1_000_000_000)
  return .now() + .nanoseconds(Int(nanoseconds))
}
