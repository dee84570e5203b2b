// Observing one side of the outcome, running code on either outcome, and reading the outcome now; and
// the small steps people coming from other promise libraries reach for on their first day: `validate`
// and `compactMap` (a value that fails a check, or a `nil`, becomes a failure), `alwaysAsync` (cleanup
// that is itself a promise), `init(catching:)` (a throwing start) and `setFailureType(to:)` (a promise
// that cannot fail joining a chain that can). Each is made of the core's steps, with no state of its own.
//
// `onSuccess`, `always`, `alwaysAsync`, `validate` and `compactMap` hand the value to a closure on
// whichever thread settles the promise, and `settledResult` hands it to whichever thread reads it, so
// they need `Success: Sendable`; `onFailure` never sees the value and works for any `Success`.
// `onMainActor` has all of them for any `Success`.
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
  ///
  /// It does not hear a failure: a failed promise that only `onSuccess` observed is reported when it is
  /// released (see ``PromiseDiagnostics/unheardFailureHandler``). Add ``onFailure(_:)`` beside it.
  /// - Parameter body: Called with the success value, at most once.
  /// - Returns: This promise, so that more observers can be chained.
  @inlinable @discardableResult
  public func onSuccess(_ body: @escaping @Sendable (Success) -> Void) -> Self {
    self._await(hearing: false) { if case .success(let value) = $0 { body(value) } }
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
  /// Reading a failure here hears it (see ``PromiseDiagnostics/unheardFailureHandler``); reading `nil` hears
  /// nothing.
  @inlinable public var settledResult: Result<Success, Failure>? { _hear(if: _outcome != nil) }

  /// Runs `body` on either outcome, then passes the same result on — like `finally` in JavaScript.
  ///
  /// ```swift
  /// showSpinner()
  /// load(id)
  ///     .always { _ in hideSpinner() }
  ///     .onSuccess { user in show(user) }
  /// ```
  ///
  /// The returned promise settles after `body` has returned, with this promise's result. `body` hears a
  /// failure, so the returned promise starts out heard: a chain may end here, or in `.onSuccess` after it,
  /// without a failure being reported as unheard (see ``PromiseDiagnostics/unheardFailureHandler``).
  ///
  /// **Cancellation:** the returned promise is a step, a *dependent* of this one (see `cancel()` in
  /// `ResultPromise+Cancellation.swift`), whether or not anyone keeps it: an `always` result made and
  /// dropped keeps a shared, cancellable promise wanted until that promise settles, so the other callers'
  /// requests do not stop it. To watch a shared promise without wanting it, use ``await(_:)``,
  /// ``onSuccess(_:)`` or ``onFailure(_:)``, which are never dependents.
  /// - Parameters:
  ///   - body: Called with the result, exactly once.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, after `body` has run.
  @inlinable @discardableResult
  public func always(
    file: StaticString = #fileID, line: UInt = #line,
    _ body: @escaping @Sendable (Result<Success, Failure>) -> Void
  ) -> ResultPromise<Success, Failure> {
    // Held as an `_Observer`, a struct: a bare closure in the step's generic storage needs a reabstraction
    // thunk, one allocation per step, unless the optimiser specialises this for the closure literal. Its
    // promise starts heard: `body` hears the failure, so a chain may end here.
    _chain(_Observer(body), startsHeard: true, at: file, line) { body, result, next in
      body.call(result)
      next.fulfil(with: result)
    }
  }

  /// Runs `cleanup` on either outcome, waits for the promise it returns, then passes the same result on —
  /// asynchronous cleanup, like PromiseKit's `ensureThen`.
  ///
  /// ```swift
  /// let session = api.openSession()
  /// let report = session
  ///     .thenAsync { session in session.upload(file) }
  ///     .alwaysAsync { _ in api.closeSession() }   // ResultPromise<Void, Never>
  ///     .onSuccess { receipt in show(receipt) }     // after the session is closed
  /// ```
  ///
  /// The returned promise settles with this promise's result once the cleanup promise has settled; the
  /// cleanup cannot fail, so what it reports never replaces the result. A request (see `cancel()`, in
  /// `ResultPromise+Cancellation.swift`) reaches this promise while it is pending, and never the cleanup:
  /// once started, the cleanup is shielded and runs to its end, as a `finally` block does (closing a
  /// session after a cancelled upload must not be asked to stop). A caller who will not wait for the
  /// cleanup leaves with `abandoningOnCancel(with:)`. Like ``always(file:line:_:)``, the returned promise is a
  /// dependent of this one.
  /// - Parameters:
  ///   - cleanup: Called with the result, exactly once; the promise it returns is waited for.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, after the cleanup has.
  @inlinable @discardableResult
  public func alwaysAsync(
    file: StaticString = #fileID, line: UInt = #line,
    _ cleanup: @escaping @Sendable (Result<Success, Failure>) -> ResultPromise<Void, Never>
  ) -> ResultPromise<Success, Failure> {
    // Shielded: the step waits for the cleanup as a plain observer, which passes no request on to it. Its
    // promise starts heard: `cleanup` hears the failure, so a chain may end here.
    _chain(_Make(cleanup), startsHeard: true, at: file, line) { cleanup, result, next in
      cleanup.call(result)._await { _ in next.fulfil(with: result) }
    }
  }

  /// Passes the value on if `isValid` says yes; otherwise fails with `failure`.
  ///
  /// ```swift
  /// fetchUser(id)
  ///     .validate(else: .suspended) { user in user.isActive }
  ///     .onSuccess { user in greet(user) }
  /// ```
  ///
  /// The same step as `then { isValid($0) ? .success($0) : .failure(failure) }`. A failure skips the check
  /// and passes on.
  /// - Parameters:
  ///   - failure: The error to fail with when the check says no; evaluated only then.
  ///   - isValid: Called with the success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of this value, or of `failure`.
  @inlinable public func validate(
    else failure: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line,
    _ isValid: @escaping @Sendable (Success) -> Bool
  ) -> ResultPromise<Success, Failure> {
    then(file: file, line: line) { isValid($0) ? .success($0) : .failure(failure()) }
  }

  /// Transforms the value; a `nil` fails with `failure`.
  ///
  /// ```swift
  /// download(url)
  ///     .compactMap(else: .notAnImage) { data in UIImage(data: data) }
  ///     .onSuccess { image in show(image) }
  /// ```
  ///
  /// As PromiseKit's `compactMap`, with the failure given here so that it stays typed. A failure skips
  /// `transform` and passes on.
  /// - Parameters:
  ///   - failure: The error to fail with when `transform` returns `nil`; evaluated only then.
  ///   - transform: Called with the success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the transformed value, or of `failure`.
  @inlinable public func compactMap<NewSuccess>(
    else failure: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line,
    _ transform: @escaping @Sendable (Success) -> NewSuccess?
  ) -> ResultPromise<NewSuccess, Failure> {
    then(file: file, line: line) { transform($0).map(Result.success) ?? .failure(failure()) }
  }
}

nonisolated extension ResultPromise {
  /// A settled promise of what `body` returns or throws, as `Result(catching:)`.
  ///
  /// ```swift
  /// // Profile(parsing:) throws(ParseError)
  /// let avatar = ResultPromise(catching: { try Profile(parsing: data) })
  ///     .thenAsync { profile in avatars.load(profile.avatarID) }
  /// ```
  ///
  /// `body` runs at once, on the calling thread. A start that throws, as khanlou's `kickoff` and
  /// PromiseKit's `firstly` (for synchronous work).
  /// - Parameters:
  ///   - body: Returns the success value or throws the failure.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    file: StaticString = #fileID, line: UInt = #line, catching body: () throws(Failure) -> Success
  ) {
    self.init(Result(catching: body), file: file, line: line)
  }

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
  /// - Parameters:
  ///   - failureType: The failure type of the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise with this promise's value and the failure type `NewFailure`.
  @inlinable public func setFailureType<NewFailure>(
    to failureType: NewFailure.Type, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, NewFailure> {
    _chain((), at: file, line) { _, result, next in next.fulfil(with: .success(result.get())) }
  }
}
