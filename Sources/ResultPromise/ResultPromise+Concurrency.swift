// The bridge to Swift Concurrency, both ways: `await` a promise from async code, and start a promise
// from an async operation. The value moves between tasks, so `Success` must be `Sendable`; main-actor
// code awaits a promise of a non-`Sendable` value through `onMainActor`.
//
// A task awaiting a promise is one observer of it, which resumes the task's continuation from the
// promise's delivery, on the settling thread, as a completion handler would (the main-actor file's
// `_result`). The task is also one of the promise's dependents: when it is cancelled, it lets the promise
// go (see `cancel()`); and a promise made from an async operation cancels its task on a request. The
// `…AbandoningOnCancel` pair stops waiting at once when the task is cancelled: the task's one object
// (`_TaskWaiter`) races its cancellation handler against its observer, and takes the observer back.
//
// This file needs the core file, `ResultPromise+MainActor.swift` (which awaits for both views) and
// `ResultPromise+Cancellation.swift` beside it.

nonisolated extension ResultPromise where Success: Sendable {
  /// The success value, awaited from Swift Concurrency; throws the failure.
  ///
  /// ```swift
  /// let user = try await load(id).value   // throws(StoreError)
  /// ```
  ///
  /// **Cancellation:** the awaiting task is a dependent of the promise (see ``cancel()``). If the task is
  /// cancelled, it lets the promise go: when nothing else wants a promise that can be cancelled, the
  /// request reaches its work, which reports how it ended in its own `Failure` — and that is what this
  /// throws. The wait still ends only when the promise settles: a promise that cannot be cancelled, or
  /// that something else still wants, is awaited to its end, as `Task.value` is. To stop waiting at once
  /// when the task is cancelled, use ``valueAbandoningOnCancel()``; to bound the wait, await
  /// `promise.timeout(_:failure:clock:).value`. Any number of tasks may await one promise; each resumes
  /// exactly once.
  ///
  /// **A promise nobody will settle is awaited for ever, without a report.** The task holds the promise it
  /// awaits, so a pending promise that nothing else holds — a `ResultPromise()` whose owner went away — is
  /// never deallocated, and so never reported as dropped while pending. (A `ResultPromise { done in … }`
  /// whose `done` is released uncalled is reported, in debug builds.) Keep who settles it alive, or bound the
  /// wait with a timeout; see <doc:Troubleshooting>.
  @inlinable public var value: Success {
    get async throws(Failure) { try await result.get() }
  }

  /// The result, awaited from Swift Concurrency.
  ///
  /// ```swift
  /// switch await load(id).result {
  /// case .success(let user): show(user)
  /// case .failure(let error): show(error)
  /// }
  /// ```
  ///
  /// **Cancellation:** as for ``value-2qr5k``: a cancelled awaiting task lets the promise go, so the work behind
  /// a promise nothing else wants is asked to stop; the wait ends when the promise settles, with the
  /// outcome the work reports. To stop waiting at once, use ``resultAbandoningOnCancel()``; to bound the
  /// wait, ``timeout(_:failure:clock:file:line:)``. Any number of tasks may await one promise; each resumes exactly
  /// once.
  @inlinable public var result: Result<Success, Failure> {
    get async { await _result() }
  }

  /// Starts a `Task` that runs `operation` and settles the promise with its outcome.
  ///
  /// ```swift
  /// let profile = ResultPromise<Profile, APIError> { () async throws(APIError) -> Profile in
  ///     try await api.profile(id)
  /// }
  /// profile.onSuccess { show($0) }
  /// ```
  ///
  /// The promise settles on the thread the task finishes on. ``cancel()`` — on this promise, or reaching
  /// it from one made from it — cancels the task: `operation` sees `Task.isCancelled` (and
  /// `Task.sleep` throws), and reports its own `Failure` or finishes. The task is not cancelled if the
  /// promise is released; it holds the promise until it finishes.
  /// - Parameters:
  ///   - priority: The task's priority; `nil` for the default.
  ///   - operation: The async work; its value or thrown error settles the promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable
  public convenience init(
    priority: TaskPriority? = nil, file: StaticString = #fileID, line: UInt = #line,
    operation: @escaping @Sendable () async throws(Failure) -> Success
  ) {
    let record = _Cancellation()
    self.init(_pending: record)
    _made(at: file, line)
    let task = Task(priority: priority) {
      do throws(Failure) {
        self.fulfil(with: .success(try await operation()))
      } catch {
        self.fulfil(with: .failure(error))
      }
    }
    record.onCancel { task.cancel() }
  }
}

nonisolated extension ResultPromise where Success: Sendable {
  /// The result, awaited from Swift Concurrency — unless the awaiting task is cancelled first.
  ///
  /// ```swift
  /// .task {   // SwiftUI: the task is cancelled when the view goes away
  ///     do {
  ///         let result = try await store.load(id).resultAbandoningOnCancel()
  ///         show(result)
  ///     } catch {
  ///         // the view went away before the result came (the load stops, unless others want it)
  ///     }
  /// }
  /// ```
  ///
  /// If the awaiting task is cancelled before the promise settles — or was cancelled before this call
  /// — this returns at once by throwing `CancellationError`. Otherwise it returns like ``result``.
  /// The task is resumed exactly once, also when cancellation and settlement race. Cancelling it also
  /// lets the promise go, as for ``value-2qr5k``: if nothing else wants a promise that can be cancelled, its
  /// work is asked to stop (the `CancellationError` has been thrown by then, whatever the work reports).
  /// This wait never settles the promise itself. Once it has returned, the promise keeps nothing of the
  /// task.
  /// - Returns: The promise's result.
  /// - Throws: `CancellationError` if the task was cancelled before the promise settled.
  @inlinable
  public func resultAbandoningOnCancel() async throws(CancellationError) -> Result<Success, Failure> {
    try await _resultAbandoningOnCancel()
  }

  /// The success value, awaited from Swift Concurrency — unless the awaiting task is cancelled first.
  ///
  /// ```swift
  /// func handle(_ request: Request) async throws -> Response {
  ///     let user = try await users.load(request.userID).valueAbandoningOnCancel()   // the client may hang up
  ///     return Response(user)
  /// }
  /// ```
  ///
  /// As ``resultAbandoningOnCancel()``, but returns the value and throws the failure.
  /// - Returns: The success value.
  /// - Throws: `CancellationError` if the task was cancelled before the promise settled, otherwise the
  ///   promise's failure.
  @inlinable public func valueAbandoningOnCancel() async throws -> Success {
    try await resultAbandoningOnCancel().get()
  }
}

@MainActor
extension MainActorPromise {
  /// The result, awaited on the main actor — unless the awaiting task is cancelled first.
  ///
  /// ```swift
  /// .task {   // SwiftUI: cancelled when the view goes away
  ///     if let result = try? await store.band(id).onMainActor.resultAbandoningOnCancel() {
  ///         self.band = try? result.get()
  ///     }
  /// }
  /// ```
  ///
  /// As ``ResultPromise/resultAbandoningOnCancel()``: if the task is cancelled before the promise settles
  /// (or was before the call), this throws `CancellationError` at once, and lets the promise go.
  /// - Returns: The promise's result.
  /// - Throws: `CancellationError` if the task was cancelled before the promise settled.
  @inlinable
  public func resultAbandoningOnCancel() async throws(CancellationError) -> Result<Success, Failure> {
    try await promise._resultAbandoningOnCancel(afterHops: true)
  }

  /// The success value, awaited on the main actor — unless the awaiting task is cancelled first.
  ///
  /// ```swift
  /// let band = try await store.band(id).onMainActor.valueAbandoningOnCancel()
  /// ```
  ///
  /// As ``resultAbandoningOnCancel()``, but returns the value and throws the failure.
  /// - Returns: The success value.
  /// - Throws: `CancellationError` if the task was cancelled before the promise settled, otherwise the
  ///   promise's failure.
  @inlinable public func valueAbandoningOnCancel() async throws -> Success {
    try await resultAbandoningOnCancel().get()
  }
}

nonisolated extension ResultPromise where Success: Sendable, Failure == Never {
  /// The success value, awaited from Swift Concurrency; no `try`, since the promise cannot fail.
  ///
  /// ```swift
  /// let tick = await ResultPromise<String, Never>.after(.seconds(1), value: "tick").value
  /// ```
  ///
  /// A cancelled awaiting task lets the promise go, and waits for its outcome; see ``ResultPromise/result``.
  @inlinable public var value: Success {
    get async { await result.get() }
  }
}

nonisolated extension ResultPromise {
  /// The result, awaited by a task on `isolation` that leaves if it is cancelled first (see `_TaskWaiter`;
  /// `afterHops` as for `_result`).
  @inlinable func _resultAbandoningOnCancel(
    afterHops: Bool = false, isolation: isolated (any Actor)? = #isolation
  ) async throws(CancellationError) -> Result<Success, Failure> {
    if let now = _delivered(afterHops: afterHops) { return now }
    let waiter = _TaskWaiter(self, afterHops: afterHops)
    let carried = await withTaskCancellationHandler(
      operation: { await withUnsafeContinuation(isolation: isolation) { waiter.wait(resuming: $0) } },
      onCancel: { waiter.leave() }, isolation: isolation)
    guard let carried else { throw CancellationError() }
    return carried.result
  }
}

/// A task awaiting a promise through the `…AbandoningOnCancel` pair, and the one object that wait allocates.
/// The observer it registers on the promise (which captures only this object) and the task's cancellation
/// handler race to resume the task; whichever takes the continuation resumes it, once. A cancellation decides
/// only while the promise is pending (once it has settled, its delivery brings the outcome), and takes the
/// observer back at once; then the task lets the promise go, as a cancelled task awaiting `result` does.
///
/// `@unchecked Sendable`: `continuation`, `place` and `left` are read and written under the lock; the other
/// fields never change. The promise may hold a value that is not `Sendable`: only the view's main-actor
/// task awaits such a promise, and the value reaches it through `_TaskResult`.
@usableFromInline final nonisolated class _TaskWaiter<Success, Failure: Error>: @unchecked Sendable {
  @usableFromInline typealias Continuation = UnsafeContinuation<_TaskResult<Success, Failure>?, Never>
  @usableFromInline let promise: ResultPromise<Success, Failure>
  @usableFromInline let afterHops: Bool
  /// The task's interest in the promise, as a dependent.
  @usableFromInline let dependent: _Extras?
  @exclusivity(unchecked) @usableFromInline var continuation: Continuation?
  /// Where the observer went (see `_await`), once registered.
  @exclusivity(unchecked) @usableFromInline var place: Int?
  @exclusivity(unchecked) @usableFromInline var left = false

  @inlinable init(_ promise: ResultPromise<Success, Failure>, afterHops: Bool) {
    (self.promise, self.afterHops) = (promise, afterHops)
    dependent = promise._extras?.dependent(on: nil, at: promise._depth)
  }

  /// Keeps the suspended task's continuation and registers the observer that resumes it; resumes it with
  /// `nil` at once if the task has left already.
  @inlinable func wait(resuming continuation: Continuation) {
    let leftAlready: Bool = _Lock(for: self).withLock {
      if !left { self.continuation = continuation }
      return left
    }
    guard !leftAlready else { return continuation.resume(returning: nil) }
    let place = promise._await { [self] in resume($0) }
    let withdraws: Bool = _Lock(for: self).withLock {
      self.place = place
      return left
    }
    if withdraws, let place { promise._withdraw(place) }
  }

  /// The promise's outcome: resumes the task with it, unless the task has left.
  @inlinable func resume(_ result: Result<Success, Failure>) {
    let taken = _Lock(for: self).withLock { continuation.take() }
    guard let taken else { return }
    _MainQueue.resume(taken, with: _TaskResult(result), for: promise, afterHops: afterHops)
  }

  /// The task was cancelled: while the promise is pending, takes the observer back and resumes the task
  /// with `nil`; then lets the promise go.
  @inlinable func leave() {
    if promise.isPending {
      let (taken, place) = _Lock(for: self).withLock {
        left = true
        return (continuation.take(), self.place.take())
      }
      if let place { promise._withdraw(place) }
      taken?.resume(returning: nil)
    }
    dependent?.settled(at: 0)
  }
}
