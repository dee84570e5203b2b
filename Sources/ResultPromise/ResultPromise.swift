// ResultPromise — a minimal, thread-safe, stack-safe promise typed like `Result`.
//
// This file is the whole core. It needs nothing else from the package: copy it alone into a
// project and it compiles (Swift 6 language mode, Linux and Apple platforms).
//
// How it works, in brief:
// - Each promise guards its state (result and waiting observers) with a mutex from a fixed striped
//   table (no lock storage or allocation per promise), never holds it while user code runs and never
//   holds two at once.
// - Delivery is synchronous, on the thread that settles the promise (or that registers on a settled
//   one). Work set off from *inside* a callback — another `fulfil`, an `await` on a settled
//   promise — is not run recursively: it goes to a per-thread first-in-first-out queue that the
//   outermost call drains in a loop. So a chain of any length settles in constant stack depth.
// - A delivery runs in rounds, each calling the observers waiting at its start. An observer added
//   while a delivery is under way joins it instead of running at once on its own thread, so observers
//   run in registration order and never two at once: the next round picks it up.
// - Releasing a pending chain would free it recursively (each observer holds the next promise);
//   `deinit` hands the observers to a per-thread "graveyard" that is emptied in a loop instead.

import Dispatch

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#endif

/// A value of type `Success` or an error of type `Failure` that becomes available later, exactly once.
///
/// Wrap a completion-handler API, chain steps that return a `Result` (``then(_:)``) or another
/// promise (``thenAsync(_:)``), and handle the failure once at the end:
///
/// ```swift
/// func load(_ id: Int) -> ResultPromise<Data, StoreError> {
///     ResultPromise { done in store.load(id, completion: done) }
/// }
///
/// load(1)
///     .then { data in decode(data) }               // (Data) -> Result<User, StoreError>
///     .thenAsync { user in save(user) }            // (User) -> ResultPromise<User, StoreError>
///     .await { result in
///         if case .failure(let error) = result { print("failed:", error) }
///     }
/// ```
///
/// ## Threading and ordering
/// - Every method may be called from any thread at the same time.
/// - **Exactly once:** the first ``fulfil(with:)`` wins; later calls return `false` and change nothing.
///   Every observer runs exactly once.
/// - **Synchronous:** an observer registered on a settled promise runs on the calling thread before
///   ``await(_:)`` returns. One registered earlier runs on the thread that settles the promise, before
///   the outermost ``fulfil(with:)`` on that thread returns. Nothing hops to another queue, except
///   in the few operators listed below.
/// - **Reentrancy without recursion:** work triggered from inside a callback (settling another promise,
///   registering on a settled promise) is queued on the current thread and runs right after the
///   current callback returns, first in, first out, still before the outermost call returns. A nested
///   ``fulfil(with:)`` settles its promise at once and returns its `Bool` truthfully; only the
///   observers it sets off wait. This keeps chains and cascades of any length at constant stack depth.
/// - **In order:** observers of one promise run in the order they were registered. An observer
///   registered from another thread while delivery is under way runs on its own thread at once.
/// - **No lock is held while user code runs**, so callbacks may register observers, settle promises or
///   read ``isPending`` freely.
///
/// ## Where each API calls back
/// - Core operators (`then`, `thenAsync`, `map`, `mapError`, `recover`, `recoverAsync`), `await`,
///   `onSuccess`, `onFailure`, `always` and the combinators (`all`, `allSettled`, `any`, `race`, `zip`):
///   synchronously, as above — on the thread that settles the deciding input, or on the calling thread
///   if it has already settled.
/// - `receive(on:)`: every observer of the returned promise runs on the given queue.
/// - `delay`, `after`, `timeout` and `retry`: the timed work runs on a global dispatch queue, and what it
///   settles is delivered there.
/// - `value` and `result`: the awaiting task resumes on its own executor.
/// - `init(priority:operation:)`: the promise settles on the thread the task finishes on.
///
/// ## Sendable and non-Sendable values
/// A promise is `Sendable` when its `Success` is, and then may be shared by any threads. `Success` need
/// not be `Sendable`: a promise of a non-`Sendable` value (a Core Data object, a mutable model class) is
/// itself not `Sendable`, so the compiler keeps it, and the value, in the isolation domain that made it.
/// The library adds no way around that:
/// - Callbacks are `@Sendable`, because they run on whichever thread settles the promise. A `@Sendable`
///   callback cannot capture non-`Sendable` state; it gets the value as a parameter, which the compiler
///   does not let it send anywhere else.
/// - The `fulfil` function that `init(_ start:)` hands out is the one way in from another thread. For a non-`Sendable` value it takes the result as `sending`:
///   the sender gives the value up, and the compiler rejects code that keeps using it afterwards.
/// - What moves a value to another thread or task by design — `receive(on:)`, `delay`, `after`,
///   `timeout`, `retry`, `value`, `result` and `init(priority:operation:)` — requires `Success: Sendable`.
/// - Main-actor code, whose callbacks touch main-actor state and non-`Sendable` objects, uses
///   `onMainActor`, whose closures run on the main actor.
public final class ResultPromise<Success, Failure: Error> {
  /// The lock guarding `_outcome`, `_first` and `_more`: this promise's stripe of the shared table.
  @inlinable var _lock: _Lock { _Lock(for: self) }
  // Every mutable field is written only while `_lock` is held. `_outcome` never changes once set, and
  // a delivery, which reads it without the lock, is scheduled only after it was set.
  // `@exclusivity(unchecked)`: the lock already rules out overlapping accesses; the dynamic checks cost
  // more than the rest of a delivery.
  /// The outcome, once settled. Never changes after it is set. (A three-case enum rather than
  /// `Result?`: the generic `deinit` looks up the metadata of this field's type to destroy it, and an
  /// optional `Result` needs two lookups — a third of the cost of a whole `map` step.)
  @exclusivity(unchecked) @usableFromInline var _outcome: _Outcome<Success, Failure>
  /// The first waiting observer, stored inline so the common single-observer case needs no array.
  @exclusivity(unchecked) @usableFromInline var _first: _Observer<Success, Failure>?
  /// Further waiting observers, in registration order.
  @exclusivity(unchecked) @usableFromInline var _more: [_Observer<Success, Failure>] = []
  /// Where the delivery of the outcome stands. Observers added while it is under way, from any thread,
  /// join it: the delivering thread runs them after the others.
  @exclusivity(unchecked) @usableFromInline var _delivery = _Delivery.idle
  /// Whether dropping this promise while pending is reported (user-created promises only).
  @usableFromInline let _reportsBroken: Bool
  /// Where observers run, for promises made by `receive(on:)`; `nil` means synchronously.
  @usableFromInline let _queue: DispatchQueue?
  #if DEBUG
    /// Where a user-created promise was made, for the broken-promise report. Debug builds only: release
    /// builds spend no memory on it. Set once, before the promise is shared.
    @usableFromInline var _origin: (file: StaticString, line: UInt)?
  #endif

  @inlinable init(
    _result: Result<Success, Failure>?, reportsBroken: Bool, queue: DispatchQueue? = nil
  ) {
    self._outcome = _Outcome(_result)
    self._reportsBroken = reportsBroken
    self._queue = queue
  }

  /// Creates a pending promise; settle it later with ``fulfil(with:)``, ``succeed(_:)`` or ``fail(_:)``.
  ///
  /// ```swift
  /// let promise = ResultPromise<Int, MyError>()
  /// promise.await { print($0) }
  /// promise.succeed(42)   // prints "success(42)"
  /// ```
  ///
  /// If the promise is deallocated while still pending with observers waiting, it reports itself
  /// through ``PromiseDiagnostics/brokenPromiseHandler``; in debug builds the report names the file and
  /// line of this call.
  /// - Parameters:
  ///   - file: Where the promise is made, for the report; leave the default.
  ///   - line: The line where the promise is made, for the report; leave the default.
  @inlinable public convenience init(file: StaticString = #fileID, line: UInt = #line) {
    self.init(_result: nil, reportsBroken: true)
    #if DEBUG
      _origin = (file, line)
    #endif
  }

  /// Creates a promise that is already settled with `result`.
  ///
  /// ```swift
  /// let done = ResultPromise<Int, MyError>(.success(1))
  /// ```
  /// - Parameter result: The outcome every observer receives.
  @inlinable public convenience init(_ result: Result<Success, Failure>) {
    self.init(_result: result, reportsBroken: false)
  }

  // Disfavoured because a trailing closure also matches `value:` (a closure is a possible `Success`):
  // where the value type is inferred, `ResultPromise { done in … }` must mean `init(_ start:)`.
  /// Creates a promise that has already succeeded with `value`.
  ///
  /// ```swift
  /// let one = ResultPromise<Int, MyError>(value: 1)
  /// ```
  /// - Parameter value: The success value.
  @inlinable @_disfavoredOverload public convenience init(value: Success) {
    self.init(.success(value))
  }

  /// Creates a promise that has already failed with `error`.
  ///
  /// ```swift
  /// let failed = ResultPromise<Int, MyError>(error: .notFound)
  /// ```
  /// - Parameter error: The failure.
  @inlinable public convenience init(error: Failure) {
    self.init(.failure(error))
  }

  /// Creates a pending promise and hands its `fulfil` function to `start`, which wraps a
  /// completion-handler API. This is the form for a non-`Sendable` `Success`; for a `Sendable` one, the
  /// same call picks the form whose `fulfil` takes a plain `Result`.
  ///
  /// ```swift
  /// // `Document` is a class that is not `Sendable`; `parse` makes a new one on a background queue.
  /// let document = ResultPromise<Document, ParseError> { done in
  ///     queue.async { done(parse(data)) }
  /// }
  /// ```
  ///
  /// `fulfil` takes the result as `sending`: whoever calls it gives the value up, so the compiler
  /// rejects a sender that keeps using the value after handing it over. Everything else is as for the
  /// `Sendable` form: `start` runs synchronously, `fulfil` may be called from any thread and only its
  /// first call has an effect, and a promise whose `fulfil` is dropped uncalled is reported like one
  /// made with ``init(file:line:)``.
  /// - Parameters:
  ///   - start: Starts the work and arranges for `fulfil` to be called with its outcome.
  ///   - file: Where the promise is made, for the broken-promise report; leave the default.
  ///   - line: The line where the promise is made, for the report; leave the default.
  @inlinable public convenience init(
    _ start: (_ fulfil: @escaping @Sendable (sending Result<Success, Failure>) -> Void) -> Void,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init(file: file, line: line)
    let handle = _SendingHandle(self)
    start { handle.promise.fulfil(with: $0) }
  }

  deinit {
    // Settled promises have delivered and dropped their observers; only a pending one still holds
    // any (`_more` is non-empty only when `_first` is set).
    guard _first != nil else { return }
    if _reportsBroken, case .pending = _outcome {
      #if DEBUG
        PromiseDiagnostics._report(Self.self, observers: 1 + _more.count, madeAt: _origin)
      #else
        PromiseDiagnostics._report(Self.self, observers: 1 + _more.count, madeAt: nil)
      #endif
    }
    // Each observer owns the next promise of its chain; releasing them here would recurse once per
    // link. Hand the only references to the graveyard, which releases them in a loop instead.
    _Trampoline.current.bury(_takeObservers())
  }

  /// The outcome as a `Result`, or `nil` while pending.
  @inlinable var _result: Result<Success, Failure>? {
    switch _outcome {
    case .pending: nil
    case .success(let value): .success(value)
    case .failure(let error): .failure(error)
    }
  }

  // MARK: Resolving

  /// Settles the promise with `result`, unless it is already settled.
  ///
  /// ```swift
  /// let promise = ResultPromise<Int, MyError>()
  /// promise.fulfil(with: .success(1))   // true
  /// promise.fulfil(with: .success(2))   // false: the first result stays
  /// ```
  ///
  /// Observers registered before this call run on the calling thread before the outermost `fulfil` on
  /// this thread returns (see the type's threading notes for calls made from inside a callback).
  /// - Parameter result: The outcome.
  /// - Returns: `true` if this call settled the promise; `false` if it was already settled, in which
  ///   case nothing changes and no observer is called.
  @inlinable @discardableResult
  public func fulfil(with result: Result<Success, Failure>) -> Bool {
    // nil: already settled; false: settled now, nobody waiting; true: settled now, observers waiting.
    let settled: Bool? = _lock.withLock {
      guard case .pending = _outcome else { return nil }
      _outcome = _Outcome(result)
      guard _first != nil else { return false }
      _delivery = .scheduled
      return true
    }
    if settled == true { _scheduleDelivery() }
    return settled != nil
  }

  /// Settles the promise with a success, unless it is already settled.
  ///
  /// ```swift
  /// promise.succeed(42)
  /// ```
  /// - Parameter value: The success value.
  /// - Returns: `true` if this call settled the promise, `false` if it was already settled.
  @inlinable @discardableResult
  public func succeed(_ value: Success) -> Bool {
    fulfil(with: .success(value))
  }

  /// Settles the promise with a failure, unless it is already settled.
  ///
  /// ```swift
  /// promise.fail(.notFound)
  /// ```
  /// - Parameter error: The failure.
  /// - Returns: `true` if this call settled the promise, `false` if it was already settled.
  @inlinable @discardableResult
  public func fail(_ error: Failure) -> Bool {
    fulfil(with: .failure(error))
  }

  // MARK: Observing

  /// Whether the promise is still waiting for its result. Safe to read from any thread.
  ///
  /// ```swift
  /// if promise.isPending { showSpinner() }
  /// ```
  @inlinable public var isPending: Bool {
    _lock.withLock {
      if case .pending = _outcome { return true }
      return false
    }
  }

  /// Registers `observer` to receive the result, exactly once.
  ///
  /// ```swift
  /// promise.await { result in
  ///     switch result {
  ///     case .success(let value): print(value)
  ///     case .failure(let error): print("failed:", error)
  ///     }
  /// }
  /// ```
  ///
  /// If the promise is settled, `observer` runs on the calling thread before this method returns
  /// (queued behind the current callback if called from inside one). Otherwise it runs on the thread
  /// that settles the promise. Observers run in registration order.
  /// - Parameter observer: Receives the result. The promise releases it after calling it.
  @inlinable
  public func `await`(_ observer: @escaping @Sendable (Result<Success, Failure>) -> Void) {
    _await(observer)
  }

  /// `await` for the library's own observers, which need not be `@Sendable` (see `_Observer`).
  @inlinable func _await(_ observer: @escaping _Observer<Success, Failure>) {
    // The result to call `observer` with here, or `nil` if it now waits: the promise is pending, or a
    // delivery is under way (which it joins), or it starts a delivery on the promise's queue.
    var schedules = false
    let settled: Result<Success, Failure>? = _lock.withLock {
      if let result = _result, _delivery == .idle, _queue == nil { return result }
      if _first == nil { _first = observer } else { _more.append(observer) }
      guard _result != nil else { return nil }
      // Settled: start a delivery on the queue, or join the one under way. A round already scheduled
      // will take this observer. Schedule the next round now if the running one is on a serial queue
      // (which runs it next) or on this thread (so that it keeps first-in-first-out order with what else
      // this thread queues); a running round on another thread schedules it itself when it ends.
      if _delivery == .idle
        || (_delivery == .running && (_queue != nil || _Trampoline.current.isRunning(self)))
      {
        _delivery = .scheduled
        schedules = true
      }
      return nil
    }
    if schedules { _scheduleDelivery() }
    guard let result = settled else { return }
    let trampoline = _Trampoline.current
    if trampoline.isDraining {
      trampoline.enqueue(_LateObserver(observer, of: self).job)
    } else {
      trampoline.runAsCallback { observer(result) }
    }
  }

  // MARK: Chaining

  /// Continues with a synchronous step that may fail; a failure skips the step and passes on.
  ///
  /// ```swift
  /// let parsed: ResultPromise<User, AppError> = download(url).then { data in parse(data) }
  /// ```
  /// - Parameter transform: Called with the success value; its `Result` settles the returned promise.
  /// - Returns: A promise of the step's result.
  @inlinable
  public func then<NewSuccess>(
    _ transform: @escaping @Sendable (Success) -> Result<NewSuccess, Failure>
  ) -> ResultPromise<NewSuccess, Failure> {
    if let next = _stepNow({ ResultPromise<NewSuccess, Failure>($0.flatMap(transform)) }) { return next }
    let next = ResultPromise<NewSuccess, Failure>(_result: nil, reportsBroken: false)
    self._await { next.fulfil(with: $0.flatMap(transform)) }
    return next
  }

  /// Continues with a step that returns another promise, and adopts that promise's outcome.
  ///
  /// ```swift
  /// let saved = load(id).thenAsync { user in upload(user) }   // upload returns a ResultPromise
  /// ```
  /// - Parameter transform: Called with the success value; the promise it returns settles the result.
  /// - Returns: A promise that settles like the one `transform` returns (or with this failure).
  @inlinable
  public func thenAsync<NewSuccess>(
    _ transform: @escaping @Sendable (Success) -> ResultPromise<NewSuccess, Failure>
  ) -> ResultPromise<NewSuccess, Failure> {
    let next = ResultPromise<NewSuccess, Failure>(_result: nil, reportsBroken: false)
    if _stepNow({ next._adopt($0, then: transform) }) == nil {
      self._await { next._adopt($0, then: transform) }
    }
    return next
  }

  /// Transforms the success value; a failure passes on unchanged.
  ///
  /// ```swift
  /// let count = load().map { items in items.count }
  /// ```
  /// - Parameter transform: Called with the success value.
  /// - Returns: A promise of the transformed value.
  @inlinable
  public func map<NewSuccess>(
    _ transform: @escaping @Sendable (Success) -> NewSuccess
  ) -> ResultPromise<NewSuccess, Failure> {
    if let next = _stepNow({ ResultPromise<NewSuccess, Failure>($0.map(transform)) }) { return next }
    let next = ResultPromise<NewSuccess, Failure>(_result: nil, reportsBroken: false)
    self._await { next.fulfil(with: $0.map(transform)) }
    return next
  }

  // Disfavoured so that a non-throwing closure picks the plain `map` above. With only this overload,
  // Swift infers `Failure == Never` for a non-throwing closure and breaks ordinary chains such as
  // `.map { $0 * 2 }`; the underscored attribute is the trade-off for chains that type-check unannotated.
  /// Transforms the success value with a step that may throw `Failure`.
  ///
  /// ```swift
  /// let port = config().map { (text) throws(ConfigError) -> Int in
  ///     guard let port = Int(text) else { throw .badPort }
  ///     return port
  /// }
  /// ```
  /// - Parameter transform: Called with the success value; a thrown error fails the returned promise.
  /// - Returns: A promise of the transformed value or the thrown error.
  @inlinable @_disfavoredOverload
  public func map<NewSuccess>(
    _ transform: @escaping @Sendable (Success) throws(Failure) -> NewSuccess
  ) -> ResultPromise<NewSuccess, Failure> {
    if let next = _stepNow({ ResultPromise<NewSuccess, Failure>(Self._map($0, transform)) }) { return next }
    let next = ResultPromise<NewSuccess, Failure>(_result: nil, reportsBroken: false)
    self._await { next.fulfil(with: Self._map($0, transform)) }
    return next
  }

  /// Transforms the failure, for example into the error type of the next layer.
  ///
  /// ```swift
  /// let user = db.load(id).mapError { _ in AppError.offline }
  /// ```
  /// - Parameter transform: Called with the failure.
  /// - Returns: A promise with the same success value or the transformed failure.
  @inlinable
  public func mapError<NewFailure>(
    _ transform: @escaping @Sendable (Failure) -> NewFailure
  ) -> ResultPromise<Success, NewFailure> {
    if let next = _stepNow({ ResultPromise<Success, NewFailure>($0.mapError(transform)) }) { return next }
    let next = ResultPromise<Success, NewFailure>(_result: nil, reportsBroken: false)
    self._await { next.fulfil(with: $0.mapError(transform)) }
    return next
  }

  // MARK: Recovering

  /// Handles a failure synchronously, maybe turning it into a success; a success passes on unchanged.
  ///
  /// ```swift
  /// let user = remote.load(id).recover { _ in cache.lookup(id) }   // (Error) -> Result<User, AppError>
  /// ```
  /// - Parameter transform: Called with the failure; its `Result` settles the returned promise.
  /// - Returns: A promise of the success value or the recovery's result.
  @inlinable
  public func recover<NewFailure>(
    _ transform: @escaping @Sendable (Failure) -> Result<Success, NewFailure>
  ) -> ResultPromise<Success, NewFailure> {
    _recover(transform)
  }

  // Without this overload, a closure that does not name its error type
  // (`recover { error in log(error); return .success(fallback) }`) leaves `NewFailure` uninferred.
  /// Handles a failure synchronously, keeping the error type; a success passes on unchanged.
  ///
  /// ```swift
  /// let user = remote.load(id).recover { error in
  ///     log(error)
  ///     return .success(.guest)   // the error type stays the same as `remote.load`'s
  /// }
  /// ```
  /// - Parameter transform: Called with the failure; its `Result` settles the returned promise.
  /// - Returns: A promise of the success value or the recovery's result.
  @inlinable
  public func recover(
    _ transform: @escaping @Sendable (Failure) -> Result<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _recover(transform)
  }

  /// The body of both `recover`s.
  @inlinable func _recover<NewFailure>(
    _ transform: @escaping (Failure) -> Result<Success, NewFailure>
  ) -> ResultPromise<Success, NewFailure> {
    if let next = _stepNow({ ResultPromise<Success, NewFailure>($0.flatMapError(transform)) }) { return next }
    let next = ResultPromise<Success, NewFailure>(_result: nil, reportsBroken: false)
    self._await { next.fulfil(with: $0.flatMapError(transform)) }
    return next
  }

  /// Handles a failure with a step that returns another promise; a success passes on unchanged.
  ///
  /// ```swift
  /// let user = cache.load(id).recoverAsync { _ in remote.load(id) }
  /// ```
  /// - Parameter transform: Called with the failure; the promise it returns settles the result.
  /// - Returns: A promise of the success value or the outcome of the promise `transform` returns.
  @inlinable
  public func recoverAsync<NewFailure>(
    _ transform: @escaping @Sendable (Failure) -> ResultPromise<Success, NewFailure>
  ) -> ResultPromise<Success, NewFailure> {
    let next = ResultPromise<Success, NewFailure>(_result: nil, reportsBroken: false)
    if _stepNow({ next._adopt($0, recovering: transform) }) == nil {
      self._await { next._adopt($0, recovering: transform) }
    }
    return next
  }

  // MARK: Internals

  /// Runs `step` with the result right away and returns what it returns, if this promise has settled,
  /// delivers synchronously and no callback is running on this thread; otherwise returns `nil`.
  ///
  /// The fast path of the chaining operators: on a settled promise, a step needs no observer closure.
  /// Work that `step` sets off is queued and drained before this returns, as for any callback.
  @inlinable func _stepNow<T>(_ step: (Result<Success, Failure>) -> T) -> T? {
    guard _queue == nil, let result = _lock.withLock({ _delivery == .idle ? _result : nil }) else {
      return nil
    }
    let trampoline = _Trampoline.current
    guard !trampoline.isDraining else { return nil }
    return trampoline.runAsCallback { step(result) }
  }

  /// `result` with `transform` applied to its value, a thrown error becoming the failure.
  @inlinable static func _map<NewSuccess>(
    _ result: Result<Success, Failure>, _ transform: (Success) throws(Failure) -> NewSuccess
  ) -> Result<NewSuccess, Failure> {
    result.flatMap { value in Result { () throws(Failure) in try transform(value) } }
  }

  /// Settles with `result`'s failure, or like the promise `transform` makes from its value.
  @inlinable func _adopt<Value>(
    _ result: Result<Value, Failure>, then transform: (Value) -> ResultPromise<Success, Failure>
  ) {
    switch result {
    case .success(let value): _adopt(transform(value))
    case .failure(let error): fulfil(with: .failure(error))
    }
  }

  /// Settles with `result`'s value, or like the promise `transform` makes from its failure.
  @inlinable func _adopt<Failed>(
    _ result: Result<Success, Failed>, recovering transform: (Failed) -> ResultPromise<Success, Failure>
  ) {
    switch result {
    case .success(let value): fulfil(with: .success(value))
    case .failure(let error): _adopt(transform(error))
    }
  }

  /// Settles this promise like `other`, at once if `other` is settled and not delivering. A promise
  /// told to adopt itself could never settle: that is reported as a broken promise instead.
  @inlinable func _adopt(_ other: ResultPromise<Success, Failure>) {
    guard other !== self else { return PromiseDiagnostics._reportSelfAdoption(Self.self) }
    if let result = other._lock.withLock({ other._delivery == .idle ? other._result : nil }) {
      fulfil(with: result)
    } else {
      other._await { self.fulfil(with: $0) }
    }
  }
}

// `@unchecked Sendable` when the value is `Sendable`: the state is guarded by the lock as described
// at the top of the class, and a `Sendable` value may be read by any thread.
extension ResultPromise: @unchecked Sendable where Success: Sendable {}

extension ResultPromise where Success: Sendable {
  /// Creates a pending promise and hands its `fulfil` function to `start`, which wraps a
  /// completion-handler API.
  ///
  /// ```swift
  /// let user = ResultPromise<User, StoreError> { done in store.load(id, completion: done) }
  /// ```
  ///
  /// `fulfil` can be passed straight to a `@Sendable` or `@MainActor @Sendable` completion parameter.
  /// `start` runs synchronously, before the initialiser returns. `fulfil` may be called from any
  /// thread, at any time; only its first call has an effect. The closure keeps the promise alive until
  /// it is released, and a promise whose `fulfil` is dropped uncalled is reported like one made
  /// with ``init(file:line:)``.
  /// - Parameters:
  ///   - start: Starts the work and arranges for `fulfil` to be called with its outcome.
  ///   - file: Where the promise is made, for the broken-promise report; leave the default.
  ///   - line: The line where the promise is made, for the report; leave the default.
  @inlinable public convenience init(
    _ start: (_ fulfil: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Void,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init(file: file, line: line)
    start { self.fulfil(with: $0) }
  }
}

/// Carries a promise into the `fulfil` closure of `init(_ start:)` for a non-`Sendable` value.
///
/// `@unchecked Sendable`: the closure only calls `fulfil(with:)`, which is thread-safe, with a result the
/// caller has given up (`sending`); it reads nothing else of the promise.
@usableFromInline struct _SendingHandle<Success, Failure: Error>: @unchecked Sendable {
  @usableFromInline let promise: ResultPromise<Success, Failure>
  @inlinable init(_ promise: ResultPromise<Success, Failure>) { self.promise = promise }
}

extension ResultPromise where Success == Void {
  /// Settles a `Void` promise with a success, unless it is already settled.
  ///
  /// ```swift
  /// let saved = ResultPromise<Void, StoreError>()
  /// saved.succeed()
  /// ```
  /// - Returns: `true` if this call settled the promise, `false` if it was already settled.
  @inlinable @discardableResult
  public func succeed() -> Bool {
    fulfil(with: .success(()))
  }
}

// MARK: - Delivery machinery (internal)

/// Where a promise's delivery stands: none under way, a round scheduled (not started), or a round
/// running with none scheduled after it.
@usableFromInline enum _Delivery: UInt8 {
  case idle, scheduled, running
}

/// A waiting observer as the promise stores it. Not `@Sendable`: the public API takes `@Sendable`
/// closures where they may run on another thread; the library's own observers capture the promises of
/// a chain, which are `Sendable` only when their values are.
@usableFromInline typealias _Observer<Success, Failure: Error> = (Result<Success, Failure>) -> Void

/// A promise's outcome: pending, or settled one way or the other.
@usableFromInline enum _Outcome<Success, Failure: Error> {
  case pending
  case success(Success)
  case failure(Failure)

  @inlinable init(_ result: Result<Success, Failure>?) {
    switch result {
    case nil: self = .pending
    case .success(let value)?: self = .success(value)
    case .failure(let error)?: self = .failure(error)
    }
  }
}

/// Work for the per-thread queue: `run(target)`.
///
/// `run` is a closure literal written in `@inlinable` code, so the client specialises it and, with no
/// generic context left to capture, it needs no allocation. (A protocol witness would run the
/// library's unspecialised generic code instead, which costs several times more per delivery.)
///
/// `@unchecked Sendable`: a job is run once, by the one thread or queue it is handed to. Only promises
/// made by `receive(on:)`, whose values are `Sendable`, hand jobs to a queue.
@usableFromInline struct _Job: @unchecked Sendable {
  @usableFromInline let target: AnyObject
  @usableFromInline let run: (AnyObject) -> Void

  @inlinable init(_ target: AnyObject, _ run: @escaping (AnyObject) -> Void) {
    self.target = target
    self.run = run
  }
}

extension ResultPromise {
  /// A job that delivers this promise's result to the observers waiting at settlement.
  @inlinable var _deliveryJob: _Job {
    _Job(self) { unsafeDowncast($0, to: ResultPromise<Success, Failure>.self)._deliver() }
  }

  /// Runs this promise's delivery where its observers run: through the current thread's queue of work,
  /// or on its `_queue`.
  @inlinable func _scheduleDelivery() {
    let job = _deliveryJob
    if let queue = _queue {
      queue.async { _Trampoline.current.deliver(job) }
    } else {
      _Trampoline.current.deliver(job)
    }
  }

  /// Runs one round of the delivery: calls the observers waiting now. If more joined from other threads
  /// meanwhile, schedules another round behind the work already queued; otherwise the delivery ends,
  /// and observers added later run on their own threads.
  @inlinable func _deliver() {
    guard let result = _result else { return }
    let observers = _lock.withLock {
      _delivery = .running
      return _takeObservers()
    }
    observers.first?(result)
    for observer in observers.more { observer(result) }
    let another: Bool = _lock.withLock {
      guard _delivery == .running else { return false }  // a round is scheduled already
      _delivery = _first == nil ? .idle : .scheduled
      return _delivery == .scheduled
    }
    if another { _scheduleDelivery() }
  }

  /// Moves the waiting observers out, leaving none behind.
  @inlinable func _takeObservers() -> _Observers<Success, Failure> {
    // Not `_first.take()`: passing a closure through that generic function costs two reabstraction
    // allocations per delivery. `consume` ends the locals here, so the result holds the only references.
    let first = _first
    _first = nil
    var more: [_Observer<Success, Failure>] = []
    swap(&more, &_more)
    return _Observers(first: consume first, more: consume more)
  }
}

/// An observer registered on a settled promise from inside a callback, waiting in the queue.
/// It holds the promise, like a delivery job does, so that an observer only ever runs while its promise
/// is alive.
@usableFromInline final class _LateObserver<Success, Failure: Error> {
  @usableFromInline let observer: _Observer<Success, Failure>
  @usableFromInline let promise: ResultPromise<Success, Failure>

  @inlinable init(
    _ observer: @escaping _Observer<Success, Failure>, of promise: ResultPromise<Success, Failure>
  ) {
    self.observer = observer
    self.promise = promise
  }

  @inlinable var job: _Job {
    _Job(self) {
      let late = unsafeDowncast($0, to: _LateObserver<Success, Failure>.self)
      if let result = late.promise._result { late.observer(result) }
    }
  }
}

/// Observers taken from a promise deallocated while pending, kept alive until the graveyard frees them.
@usableFromInline struct _Observers<Success, Failure: Error> {
  @usableFromInline let first: _Observer<Success, Failure>?
  @usableFromInline let more: [_Observer<Success, Failure>]

  @inlinable init(first: _Observer<Success, Failure>?, more: [_Observer<Success, Failure>]) {
    self.first = first
    self.more = more
  }
}

/// The per-thread state that keeps delivery and deallocation at constant stack depth.
///
/// `isDraining` is set while a callback runs on this thread; work set off meanwhile is queued and run
/// by the outermost caller's loop. Likewise `bury` frees a released chain one link per loop turn.
/// Each instance is reached only from its own thread (through thread-local storage).
@usableFromInline final class _Trampoline {
  // `@exclusivity(unchecked)`: only ever touched by its own thread, never in overlapping accesses.
  @exclusivity(unchecked) @usableFromInline var isDraining = false
  /// The target of the job running now, if any (compared by address only).
  @exclusivity(unchecked) @usableFromInline var running: UnsafeMutableRawPointer?
  @exclusivity(unchecked) private var jobs = ContiguousArray<_Job?>(repeating: nil, count: 16)
  @exclusivity(unchecked) private var head = 0
  @exclusivity(unchecked) private var count = 0
  @exclusivity(unchecked) private var graveyard: [Any] = []
  @exclusivity(unchecked) private var isBurying = false
  @exclusivity(unchecked) private var afterDrain: [() -> Void] = []

  /// The calling thread's trampoline, created on first use and released when the thread exits.
  @usableFromInline static var current: _Trampoline {
    if let pointer = pthread_getspecific(key) {
      return Unmanaged<_Trampoline>.fromOpaque(pointer).takeUnretainedValue()
    }
    let trampoline = _Trampoline()
    pthread_setspecific(key, Unmanaged.passRetained(trampoline).toOpaque())
    return trampoline
  }

  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
      #if canImport(Darwin)
        Unmanaged<_Trampoline>.fromOpaque(pointer).release()
      #else
        if let pointer { Unmanaged<_Trampoline>.fromOpaque(pointer).release() }
      #endif
    }
    precondition(status == 0, "ResultPromise: pthread_key_create failed (\(status))")
    return key
  }()

  /// Runs `job` now if no callback is running on this thread, then everything it queued; else queues it.
  @usableFromInline func deliver(_ job: _Job) {
    if isDraining {
      enqueue(job)
    } else {
      isDraining = true
      run(job)
      drain()
    }
  }

  /// Runs `job`, noting its target so that `isRunning` can tell.
  @inlinable func run(_ job: _Job) {
    running = Unmanaged.passUnretained(job.target).toOpaque()
    job.run(job.target)
    running = nil
  }

  /// Whether the job running on this thread now is `target`'s (for a promise: a round of its delivery).
  @inlinable func isRunning(_ target: AnyObject) -> Bool {
    running == Unmanaged.passUnretained(target).toOpaque()
  }

  /// Runs `body` as a callback — work it sets off is queued — then runs the queue. Only when
  /// `isDraining` is false.
  @inlinable func runAsCallback<T>(_ body: () -> T) -> T {
    isDraining = true
    let value = body()
    drain()
    return value
  }

  /// Runs queued jobs until none is left, then leaves the draining state.
  @usableFromInline func drain() {
    while count > 0 {
      let job = jobs[head]
      jobs[head] = nil
      head = (head + 1) & (jobs.count - 1)
      count -= 1
      if let job { run(job) }
    }
    isDraining = false
    if !afterDrain.isEmpty {
      let actions = afterDrain
      afterDrain = []
      for action in actions { action() }
    }
  }

  /// Runs `action` once the callbacks running on this thread, and all they set off, have finished — at
  /// once if none is running.
  @usableFromInline func whenDrained(_ action: @escaping () -> Void) {
    if isDraining { afterDrain.append(action) } else { action() }
  }

  /// Appends `job` to this thread's first-in-first-out queue (a ring buffer; capacity a power of two).
  @usableFromInline func enqueue(_ job: _Job) {
    if count == jobs.count {
      var grown = ContiguousArray<_Job?>(repeating: nil, count: jobs.count * 2)
      for index in 0..<count { grown[index] = jobs[(head + index) & (jobs.count - 1)] }
      jobs = grown
      head = 0
    }
    jobs[(head + count) & (jobs.count - 1)] = job
    count += 1
  }

  /// Releases `remains` — and whatever that releases in turn through `bury` — in a loop, not recursively.
  /// The caller must hold no other reference to what `remains` owns, or that reference would free it
  /// recursively after this returns; hence `consuming`.
  @usableFromInline func bury(_ remains: consuming Any) {
    graveyard.append(consume remains)
    guard !isBurying else { return }
    isBurying = true
    while graveyard.popLast() != nil {}
    isBurying = false
  }
}

// MARK: - Locking (internal)

/// One of a fixed table of mutexes, picked by an object's address.
///
/// Promises are small and numerous, so none carries a lock of its own: each uses the stripe its address
/// hashes to. That costs no memory or allocation per promise, and is deadlock-free because the library
/// never holds a lock while it takes another or while user code runs. These are `pthread` mutexes so
/// that ThreadSanitizer sees them (it does not see the prebuilt `Synchronization.Mutex`).
@usableFromInline struct _Lock {
  @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

  @inlinable init(for object: AnyObject) {
    let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
    mutex = _Lock.table.mutex(at: Int(truncatingIfNeeded: (address >> 4) ^ (address >> 12)))
  }

  @inlinable func withLock<T>(_ body: () -> T) -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return body()
  }

  @usableFromInline static let table = Table()

  @usableFromInline final class Table: @unchecked Sendable {
    // @unchecked Sendable: the mutexes are created once, never moved or freed, and are themselves the
    // synchronisation.
    @usableFromInline static let count = 64
    /// Bytes between mutexes, so that each stripe sits on its own cache line.
    @usableFromInline static let stride = (MemoryLayout<pthread_mutex_t>.stride + 63) & ~63
    @usableFromInline let base: UnsafeMutableRawPointer

    init() {
      base = .allocate(byteCount: Table.count * Table.stride, alignment: 64)
      for index in 0..<Table.count {
        let mutex = (base + index * Table.stride).bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
      }
    }

    @inlinable func mutex(at hash: Int) -> UnsafeMutablePointer<pthread_mutex_t> {
      (base + (hash & (Table.count - 1)) * Table.stride).assumingMemoryBound(to: pthread_mutex_t.self)
    }
  }
}

// MARK: - Diagnostics

/// Reports promises that are dropped before they settle (a "broken promise").
///
/// A promise made with `ResultPromise()` or `ResultPromise { fulfil in … }` that is deallocated while
/// still pending, with observers waiting, calls ``brokenPromiseHandler``
/// once. Promises made by operators (`then`, `map`, …) never report, so dropping a long pending chain
/// reports once, for its root. In debug builds the report names the file and line that made the
/// promise:
///
/// ```
/// warning: ResultPromise<Data, APIError> made at App/Loader.swift:42 was deallocated while pending; its 1 observer will never be called.
/// ```
///
/// A debug build is one compiled with the `DEBUG` condition, as SwiftPM does for `swift build` and
/// `swift test` (and not for `-c release`) — for this package too when it is a dependency — and as
/// Xcode does in the Debug configuration. A copied core file follows its target's settings. Release
/// builds store no location and, by default, build no report.
///
/// ```swift
/// PromiseDiagnostics.brokenPromiseHandler = { message in logger.warning("\(message)") }
/// ```
public enum PromiseDiagnostics {
  /// Called with a one-line description when a user-created promise is deallocated while pending with
  /// observers waiting; `nil` reports nothing. Runs on the thread that releases the promise; keep it short.
  ///
  /// The default is ``writeToStandardError`` in debug builds and `nil` in release builds, where no
  /// report is even built. Safe to read and set from any thread.
  ///
  /// ```swift
  /// PromiseDiagnostics.brokenPromiseHandler = { message in logger.warning("\(message)") }
  /// PromiseDiagnostics.brokenPromiseHandler = nil   // silence
  /// ```
  public static var brokenPromiseHandler: (@Sendable (_ message: String) -> Void)? {
    get { hook.lock.withLock { hook.handler } }
    set { hook.lock.withLock { hook.handler = newValue } }
  }

  /// A ``brokenPromiseHandler`` that writes `warning: <message>` as one line to standard error.
  ///
  /// ```swift
  /// PromiseDiagnostics.brokenPromiseHandler = PromiseDiagnostics.writeToStandardError   // also in release
  /// ```
  public static let writeToStandardError: @Sendable (_ message: String) -> Void = { message in
    var line = "warning: \(message)\n"
    _ = line.withUTF8 { write(2, $0.baseAddress, $0.count) }
  }

  private final class Hook: @unchecked Sendable {
    // @unchecked Sendable: `handler` is only read and written while `lock` is held.
    var lock: _Lock { _Lock(for: self) }
    #if DEBUG
      var handler: (@Sendable (String) -> Void)? = PromiseDiagnostics.writeToStandardError
    #else
      var handler: (@Sendable (String) -> Void)? = nil
    #endif
  }

  private static let hook = Hook()

  @usableFromInline static func _reportSelfAdoption(_ type: Any.Type) {
    brokenPromiseHandler?(
      "\(type) was told to adopt itself (thenAsync or recoverAsync returned the promise it settles); "
        + "it can never settle.")
  }

  @usableFromInline static func _report(
    _ type: Any.Type, observers: Int, madeAt origin: (file: StaticString, line: UInt)?
  ) {
    guard let handler = brokenPromiseHandler else { return }
    let noun = observers == 1 ? "observer" : "observers"
    let place = origin.map { " made at \($0.file):\($0.line)" } ?? ""
    handler("\(type)\(place) was deallocated while pending; its \(observers) \(noun) will never be called.")
  }
}
