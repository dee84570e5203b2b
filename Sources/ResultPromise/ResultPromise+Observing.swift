// Observing one side of the outcome, running code on either outcome, and reading the outcome now.
// `onSuccess` and `always` hand the value to a closure on whichever thread settles the promise, and
// `settledResult` hands it to whichever thread reads it, so they need `Success: Sendable`; `onFailure`
// never sees the value and works for any `Success`. `onMainActor` has all four. And `setFailureType(to:)`,
// which lets a promise that cannot fail join a chain that can.
//
// This file needs only the core file, `ResultPromise.swift`, beside it.

nonisolated extension ResultPromise where Success: Sendable {
  /// Runs `body` with the value if the promise succeeds; does nothing on failure.
  ///
  /// ```swift
  /// load(id)
  ///     .onSuccess { user in print("loaded", user.name) }
  ///     .onFailure { error in print("failed:", error) }
  /// ```
  ///
  /// Runs where ``await(_:)`` would: synchronously on the thread that settles the promise, or on the
  /// calling thread if it has already settled.
  /// - Parameter body: Called with the success value, at most once.
  /// - Returns: This promise, so that more observers can be chained.
  @inlinable @discardableResult
  public func onSuccess(_ body: @escaping @Sendable (Success) -> Void) -> Self {
    self._await { if case .success(let value) = $0 { body(value) } }
    return self
  }

  /// The outcome, if the promise has settled; `nil` while it is pending. Reads it now, without waiting.
  ///
  /// ```swift
  /// if let result = avatar.settledResult {
  ///     show(result)            // loaded already: no spinner
  /// } else {
  ///     showSpinner()
  ///     avatar.await { result in show(result) }
  /// }
  /// ```
  ///
  /// Exact on any thread: once `fulfil` has returned on one thread, every later read on any thread sees
  /// the outcome, even while its observers are still being called. Unlike `value` and `result`, which
  /// wait for the outcome, this never suspends — and it cannot tell you about an outcome still to come.
  @inlinable public var settledResult: Result<Success, Failure>? {
    _withLock { _outcome }
  }

  /// Runs `body` on either outcome, then passes the same result on — like `finally` in JavaScript.
  ///
  /// ```swift
  /// showSpinner()
  /// load(id)
  ///     .always { _ in hideSpinner() }
  ///     .onSuccess { user in show(user) }
  /// ```
  ///
  /// The returned promise settles after `body` has returned, with this promise's result.
  ///
  /// **Cancellation:** the returned promise is a step, a *dependent* of this one (see `cancel()` in
  /// `ResultPromise+Cancellation.swift`), whether or not anyone keeps it: an `always` result made and
  /// dropped keeps a shared, cancellable promise wanted until that promise settles, so the other callers'
  /// requests do not stop it. To watch a shared promise without wanting it, use ``await(_:)``,
  /// ``onSuccess(_:)`` or ``onFailure(_:)``, which are never dependents.
  /// - Parameter body: Called with the result, exactly once.
  /// - Returns: A promise that settles like this one, after `body` has run.
  @inlinable @discardableResult
  public func always(
    _ body: @escaping @Sendable (Result<Success, Failure>) -> Void
  ) -> ResultPromise<Success, Failure> {
    _chain(body) { body, result, next in
      body(result)
      next.fulfil(with: result)
    }
  }
}

nonisolated extension ResultPromise {
  /// Runs `body` with the error if the promise fails; does nothing on success.
  ///
  /// ```swift
  /// save(profile).onFailure { error in log.error("save failed: \(error)") }
  /// ```
  ///
  /// Runs where ``await(_:)`` would.
  /// - Parameter body: Called with the failure, at most once.
  /// - Returns: This promise, so that more observers can be chained.
  @inlinable @discardableResult
  public func onFailure(_ body: @escaping @Sendable (Failure) -> Void) -> Self {
    self._await { if case .failure(let error) = $0 { body(error) } }
    return self
  }
}

nonisolated extension ResultPromise where Success == Void {
  /// Settles a `Void` promise with a success, unless it is already settled.
  ///
  /// ```swift
  /// let saved = ResultPromise<Void, StoreError>()
  /// saved.succeed()
  /// ```
  /// - Returns: `true` if this call settled the promise, `false` if it was already settled.
  @inlinable @discardableResult public func succeed() -> Bool {
    fulfil(with: .success(()))
  }
}

nonisolated extension ResultPromise where Failure == Never {
  /// This promise, typed to join a chain that can fail with `NewFailure`: it cannot fail, so it never does.
  ///
  /// ```swift
  /// let greeting: ResultPromise<String, Never> = ResultPromise(value: "hello")
  /// let sent: ResultPromise<Receipt, NetworkError> = greeting
  ///     .setFailureType(to: NetworkError.self)
  ///     .thenAsync { text in api.send(text) }
  /// ```
  ///
  /// As Combine's `setFailureType(to:)`. One step, as `mapError` makes; a request (see `cancel()`, in
  /// `ResultPromise+Cancellation.swift`) passes through it.
  /// - Parameter failureType: The failure type of the returned promise.
  /// - Returns: A promise with this promise's value and the failure type `NewFailure`.
  @inlinable public func setFailureType<NewFailure>(
    to failureType: NewFailure.Type
  ) -> ResultPromise<Success, NewFailure> {
    _chain(()) { _, result, next in next.fulfil(with: .success(result.get())) }
  }
}
