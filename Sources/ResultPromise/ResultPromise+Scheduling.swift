// Scheduling: choosing the queue that observers run on.
//
// This file needs only the core file, `ResultPromise.swift`, beside it.

import Dispatch

// Moving observers to a queue moves the value to another thread: `Success` must be `Sendable`.
nonisolated extension ResultPromise where Success: Sendable {
  /// A promise that settles like this one but runs all its observers on `queue`.
  ///
  /// ```swift
  /// load(id)
  ///     .receive(on: imageQueue)
  ///     .onSuccess { user in thumbnails.render(user) }   // on imageQueue
  /// ```
  ///
  /// Every observer of the returned promise — registered before or after it settles, from any thread —
  /// runs on `queue` (asynchronously, never inside the call that registers it). On a serial queue they
  /// run in registration order; on a concurrent queue only that they run there is promised.
  ///
  /// Every other API calls back synchronously: on the thread that settles the promise, or on the calling
  /// thread if the promise has already settled. Only `receive(on:)`, `delay`, `after`, `timeout` and
  /// `retry` move work to a queue.
  ///
  /// A request to cancel the returned promise reaches this one (see `cancel()`).
  /// - Parameters:
  ///   - queue: Where observers of the returned promise run.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise with this promise's result whose observers run on `queue`.
  @inlinable
  public func receive(
    on queue: DispatchQueue, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    // From a promise that cannot be cancelled, the plain extras: the queue alone.
    let next = ResultPromise(_pending: _extras?.dependent(on: queue, at: _depth) ?? _Extras(queue: queue))
    next._made(at: file, line, from: self)
    self._await { next.fulfil(with: $0) }
    return next
  }
}
