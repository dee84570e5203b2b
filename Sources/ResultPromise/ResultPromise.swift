// ResultPromise — a minimal, thread-safe, stack-safe promise typed like `Result`.
//
// This file is the whole core. It needs nothing else from the package: copy it alone into a project
// and it compiles (Swift 6 language mode, Linux and Apple platforms). It reads top to bottom: the
// public API, then an overview of how it works, then the machinery.

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
#if !canImport(Darwin)
  import Synchronization
#endif

/// A value of type `Success` or an error of type `Failure` that becomes available later, exactly once.
///
/// Wrap a completion-handler API, chain steps that return a `Result` (``then(file:line:_:)``) or another
/// promise (``thenAsync(file:line:_:)``), and handle the failure once at the end:
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
/// `ResultPromise` is a class you cannot subclass (`public`, not `open`): the library's own pending steps
/// are subclasses of it, so `type(of:)` a pending chained promise names an internal type.
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
/// - **In order, without exception:** observers of one promise run in the order they were registered;
///   those of one delivery run one at a time. An observer registered while the promise's observers are
///   being called on another thread joins that delivery: ``await(_:)`` returns at once, and the
///   delivering thread calls it after the ones before it. (Waiting instead could deadlock: the running
///   observer may wait for this thread.) An observer registered on a settled promise with no delivery
///   under way runs at once on its caller's thread, so two threads doing that at the same moment run
///   theirs at the same time.
/// - **No lock is held while user code runs**, so callbacks may register observers, settle promises or
///   read ``isPending`` freely.
///
/// ## Where each API calls back
/// - Core operators (`then`, `thenAsync`, `map`, `mapError`, `recover`, `recoverAsync`), `await`,
///   `onSuccess`, `onFailure`, `always` and the combinators (`all`, `allSettled`, `any`, `race`, `zip`):
///   synchronously, as above — on the thread that settles the deciding input, or on the calling thread
///   if it has already settled.
/// - `receive(on:)`: every observer of the returned promise runs on the given queue.
/// - `delay`, `after`, `timeout` and `retry`: the timed work is a task that sleeps on the given clock
///   and resumes on the global concurrent executor; what it settles is delivered there.
/// - `value` and `result`: the awaiting task resumes on its own executor.
/// - `init(priority:operation:)`: the promise settles on the thread the task finishes on.
/// - `cancel()` (`ResultPromise+Cancellation.swift`): the handlers that stop the work run on the thread
///   that asks, never under a lock; the work then settles the promise wherever it runs.
///
/// ## Sendable and non-Sendable values
/// A promise is `Sendable` when its `Success` is, and then may be shared by any threads. `Success` need
/// not be `Sendable`: a promise of a non-`Sendable` value (a Core Data object, a mutable model class) is
/// itself not `Sendable`, so the compiler keeps it, and the value, in the isolation domain that made it.
/// The library adds no way around that:
/// - Callbacks are `@Sendable`, because they run on whichever thread settles the promise, so those that
///   receive the value — `await`, `then`, `thenAsync`, `map`, `onSuccess`, `always` — require
///   `Success: Sendable`. Those that never see it (`mapError`, `recover`, `recoverAsync`, `onFailure`)
///   and the combinators take any `Success`. A non-`Sendable` value thus reaches user code only on the
///   main actor, through `onMainActor`.
/// - The `fulfil` function that `init(_ start:)` hands out is the one way in from another thread. For a
///   non-`Sendable` value it takes the result as `sending`: the sender gives the value up, and the
///   compiler rejects code that keeps using it afterwards.
/// - What moves a value to another thread or task by design — `receive(on:)`, `delay`, `after`,
///   `timeout`, `retry`, `value`, `result` and `init(priority:operation:)` — requires `Success: Sendable`.
/// - Main-actor code, whose callbacks touch main-actor state and non-`Sendable` objects, uses
///   `onMainActor`, whose closures run on the main actor.
public nonisolated class ResultPromise<Success, Failure: Error>:
  _PromiseStorage<Success, Failure, Result<Success, Failure>?>
{
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
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public init(file: StaticString = #fileID, line: UInt = #line) {
    super.init(outcome: nil, phase: .pending, flags: .reportsBroken, extras: nil)
    _made(at: file, line)
  }

  /// Creates a promise that is already settled with `result`.
  ///
  /// ```swift
  /// let done = ResultPromise<Int, MyError>(.success(1))
  /// ```
  ///
  /// A failure that nothing hears is reported when the promise is released (see
  /// ``PromiseDiagnostics/unheardFailureHandler``).
  /// - Parameters:
  ///   - result: The outcome every observer receives.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public init(_ result: Result<Success, Failure>, file: StaticString = #fileID, line: UInt = #line)
  {
    super.init(outcome: result, phase: .settled, flags: [], extras: nil)
    if case .failure = result { _flags.insert(.failed) }  // as `_settle` records it
    _made(at: file, line)
  }

  // A trailing closure must never be taken for the value: when `ResultPromise { done in … }` fails to
  // type-check as `init(_ start:)` (its completion handler has another error type, say), the compiler
  // would otherwise settle for a promise of that closure and report something unrelated much later.
  // `noTrailingClosure` takes a trailing closure instead, and rejects it.
  /// Creates a promise that has already succeeded with `value`.
  ///
  /// ```swift
  /// let one = ResultPromise<Int, MyError>(value: 1)
  /// ```
  /// - Parameters:
  ///   - value: The success value.
  ///   - noTrailingClosure: Leave it out: it only keeps a trailing closure from being read as `value`.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    value: Success, file: StaticString = #fileID, line: UInt = #line,
    _ noTrailingClosure: (() -> Never)? = nil
  ) {
    self.init(.success(value), file: file, line: line)
  }

  /// Creates a promise that has already failed with `error`.
  ///
  /// ```swift
  /// let failed = ResultPromise<Int, MyError>(error: .notFound)
  /// ```
  ///
  /// Released without anything having heard the failure, it is reported, as an unhandled `Promise.reject`
  /// is (see ``PromiseDiagnostics/unheardFailureHandler``).
  /// - Parameters:
  ///   - error: The failure.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(error: Failure, file: StaticString = #fileID, line: UInt = #line) {
    self.init(.failure(error), file: file, line: line)
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
  /// first call has an effect, and a `fulfil` released uncalled while the promise is pending is
  /// reported.
  /// - Parameters:
  ///   - start: Starts the work and arranges for `fulfil` to be called with its outcome.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (_ fulfil: @escaping @Sendable (sending Result<Success, Failure>) -> Void) -> Void,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init(file: file, line: line)
    start { [resolver = _Resolver(self)] in resolver.promise.fulfil(with: $0) }
  }

  // MARK: Settling

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
  @inlinable @discardableResult public final func fulfil(with result: Result<Success, Failure>) -> Bool {
    _settle(with: result, from: .pending)
  }

  /// Settles the promise with a success, unless it is already settled.
  ///
  /// ```swift
  /// promise.succeed(42)
  /// ```
  /// - Parameter value: The success value.
  /// - Returns: `true` if this call settled the promise, `false` if it was already settled.
  @inlinable @discardableResult public final func succeed(_ value: Success) -> Bool {
    fulfil(with: .success(value))
  }

  /// Settles the promise with a failure, unless it is already settled.
  ///
  /// ```swift
  /// promise.fail(.notFound)
  /// ```
  /// - Parameter error: The failure.
  /// - Returns: `true` if this call settled the promise, `false` if it was already settled.
  @inlinable @discardableResult public final func fail(_ error: Failure) -> Bool {
    fulfil(with: .failure(error))
  }

  // MARK: State

  /// Whether the promise is still waiting for its result. Safe to read from any thread.
  ///
  /// ```swift
  /// if promise.isPending { showSpinner() }
  /// ```
  @inlinable public final var isPending: Bool { _withLock { _phase == .pending || _phase == .claimed } }

  // MARK: Handling failures
  // These closures never see the value, so they run on any thread for any `Success`. The operations
  // whose closures receive the value require `Success: Sendable` (below); `onMainActor` has them all.

  /// Transforms the failure, for example into the error type of the next layer.
  ///
  /// ```swift
  /// let user = db.load(id).mapError { _ in AppError.offline }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise with the same success value or the transformed failure.
  @inlinable public final func mapError<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Failure) -> NewFailure
  ) -> ResultPromise<Success, NewFailure> {
    _chain(consume transform, at: file, line) { $2.fulfil(with: $1.mapError($0)) }
  }

  /// Handles a failure synchronously, maybe turning it into a success; a success passes on unchanged.
  ///
  /// ```swift
  /// let user = remote.load(id).recover { _ in cache.lookup(id) }   // (Error) -> Result<User, AppError>
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; its `Result` settles the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the success value or the recovery's result.
  @inlinable public final func recover<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Failure) -> Result<Success, NewFailure>
  ) -> ResultPromise<Success, NewFailure> {
    _chain(consume transform, at: file, line) { $2.fulfil(with: $1.flatMapError($0)) }
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
  /// - Parameters:
  ///   - transform: Called with the failure; its `Result` settles the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the success value or the recovery's result.
  @inlinable public final func recover(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Failure) -> Result<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _chain(consume transform, at: file, line) { $2.fulfil(with: $1.flatMapError($0)) }
  }

  /// Handles a failure with a step that returns another promise; a success passes on unchanged.
  ///
  /// ```swift
  /// let user = cache.load(id).recoverAsync { _ in remote.load(id) }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; the promise it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the success value or the outcome of the promise `transform` returns.
  @inlinable public final func recoverAsync<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Failure) -> ResultPromise<Success, NewFailure>
  ) -> ResultPromise<Success, NewFailure> {
    _chain(_Make(consume transform), adopts: true, at: file, line) { $2._adopt($1, recovering: $0.call) }
  }

  // Without this overload, a closure that does not name its error type
  // (`recoverAsync { _ in ResultPromise(value: fallback) }`) leaves `NewFailure` uninferred.
  /// Handles a failure with a step that returns another promise, keeping the error type.
  ///
  /// ```swift
  /// let user = remote.load(id).recoverAsync { _ in ResultPromise(value: .guest) }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; the promise it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the success value or the outcome of the promise `transform` returns.
  @inlinable public final func recoverAsync(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Failure) -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    _chain(_Make(consume transform), adopts: true, at: file, line) { $2._adopt($1, recovering: $0.call) }
  }

  /// Creates a pending promise for an operator to settle, with `extras` if it needs any. It is not
  /// reported when dropped while pending (dropping a pending chain reports its root once).
  @inlinable init(_pending extras: _Extras?, depth: UInt8 = 0, flags: _Flags = []) {
    super.init(outcome: nil, phase: .pending, flags: flags, extras: extras, depth: depth)
  }
}

// `@unchecked Sendable` when the value is `Sendable`: all mutable state is guarded by the promise's lock
// (see "How it works" below), and a `Sendable` value may be read by any thread.
nonisolated extension ResultPromise: @unchecked Sendable where Success: Sendable {}

nonisolated extension ResultPromise where Success: Sendable {
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
  /// it is released. If it is released uncalled while the promise is pending and held elsewhere (by a
  /// task awaiting it, say), that is reported through ``PromiseDiagnostics/brokenPromiseHandler``: the
  /// promise can never settle.
  /// - Parameters:
  ///   - start: Starts the work and arranges for `fulfil` to be called with its outcome.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (_ fulfil: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Void,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init(file: file, line: line)
    start { [resolver = _Resolver(self)] in resolver.promise.fulfil(with: $0) }
  }

  // MARK: Observing
  // The closures from here on receive the value on whichever thread settles the promise, so the value
  // must be `Sendable`: a non-`Sendable` value reaches user code only on the main actor, through
  // `onMainActor`.

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
  /// that settles the promise. Observers run in registration order: one registered while the promise's
  /// observers are being called on another thread is called there, after them.
  /// - Parameter observer: Receives the result. The promise releases it after calling it.
  @inlinable public func `await`(_ observer: @escaping @Sendable (Result<Success, Failure>) -> Void) {
    _await(observer)
  }

  // MARK: Chaining

  /// Continues with a synchronous step that may fail; a failure skips the step and passes on.
  ///
  /// ```swift
  /// let parsed: ResultPromise<User, AppError> = download(url).then { data in parse(data) }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value; its `Result` settles the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the step's result.
  @inlinable public func then<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Success) -> Result<NewSuccess, Failure>
  ) -> ResultPromise<NewSuccess, Failure> {
    _chain(consume transform, at: file, line) { $2.fulfil(with: $1.flatMap($0)) }
  }

  /// Continues with a step that returns another promise, and adopts that promise's outcome.
  ///
  /// ```swift
  /// let saved = load(id).thenAsync { user in upload(user) }   // upload returns a ResultPromise
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value; the promise it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like the one `transform` returns (or with this failure).
  @inlinable public func thenAsync<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Success) -> ResultPromise<NewSuccess, Failure>
  ) -> ResultPromise<NewSuccess, Failure> {
    _chain(_Make(consume transform), adopts: true, at: file, line) { $2._adopt($1, then: $0.call) }
  }

  /// Transforms the success value; a failure passes on unchanged.
  ///
  /// ```swift
  /// let count = load().map { items in items.count }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the transformed value.
  @inlinable public func map<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: __owned @escaping @Sendable (Success) -> NewSuccess
  ) -> ResultPromise<NewSuccess, Failure> {
    _chain(consume transform, at: file, line) { $2.fulfil(with: $1.map($0)) }
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
  /// - Parameters:
  ///   - transform: Called with the success value; a thrown error fails the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the transformed value or the thrown error.
  @inlinable @_disfavoredOverload public func map<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @Sendable (Success) throws(Failure) -> NewSuccess
  ) -> ResultPromise<NewSuccess, Failure> {
    // Wrapped in a `then` step: a typed-throws function type must not become a generic argument (such
    // as `_chain`'s `Transform`), which needs run-time support that only iOS 18 and macOS 15 have.
    then(file: file, line: line) { value in Result { () throws(Failure) in try transform(value) } }
  }
}

/// Reports promises that are dropped before they settle (a "broken promise"), and failures that nothing
/// heard (``unheardFailureHandler``).
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
/// Also reported, once per promise: the `fulfil` function handed out by `init(_ start:)` released
/// without having been called while its promise is pending and held elsewhere. A task awaiting the
/// promise holds it, so the promise itself is never deallocated, and the task would otherwise hang
/// without a word:
///
/// ```
/// warning: ResultPromise<Data, APIError> made at App/Loader.swift:42 is pending, but its fulfil function was released uncalled, so it can never settle (1 observer waiting).
/// ```
///
/// A promise told to adopt itself (`thenAsync` or `recoverAsync` returning the very promise it is to
/// settle) could never settle; that is reported through the same handler.
///
/// ```swift
/// PromiseDiagnostics.brokenPromiseHandler = { message in logger.warning("\(message)") }
/// ```
public nonisolated enum PromiseDiagnostics {
  /// Called with a one-line description when a user-created promise is deallocated while pending with
  /// observers waiting, or its `fulfil` function is released uncalled; `nil` reports nothing. Runs on the
  /// thread that releases the promise; keep it short. In debug builds the description names the call that
  /// made the promise (`made at App/Loader.swift:42`). A report made on that thread while a handler runs there
  /// is dropped, not nested.
  ///
  /// The default is ``writeToStandardError`` in debug builds and `nil` in release builds, where no
  /// report is even built. Safe to read and set from any thread.
  ///
  /// ```swift
  /// PromiseDiagnostics.brokenPromiseHandler = { message in logger.warning("\(message)") }
  /// PromiseDiagnostics.brokenPromiseHandler = nil   // silence
  /// ```
  public static var brokenPromiseHandler: (@Sendable (_ message: String) -> Void)? {
    get { _Lock(for: hook).withLock { hook.handler } }
    // The replaced handler is released after the lock: its captures' deinitialisers are user code.
    set { _ = _Lock(for: hook).withLock { exchange(&hook.handler, with: newValue) } }
  }

  /// Called once when a promise that failed is released without anything having heard the failure, with
  /// the error and a one-line description; `nil` reports nothing.
  ///
  /// *Heard* means: something that receives failures was attached — `await`, `onFailure`, `always`,
  /// `alwaysAsync`, any operator, combinator or timer, `receive(on:)`, `abandoningOnCancel`, a task
  /// awaiting `value` or `result`, or the main-actor view's equivalents; the promise was adopted by a
  /// `thenAsync` or `recoverAsync` step; or its `settledResult` was read after it settled. `onSuccess`,
  /// `isPending` and the description do not hear: a chain that ends in `onSuccess` alone is the commonest
  /// swallowed error. An operator hands the failure on to the promise it makes, which must be heard in turn,
  /// so a dropped chain is reported once, for its last promise. The promise `always` and `alwaysAsync`
  /// return starts out heard (ending a chain with `.always { … }` is normal), and a promise asked to
  /// `cancel()` while pending is exempt: its failure answers the request.
  ///
  /// The default, in debug builds, writes one line with ``writeToStandardError``, naming the type, the call
  /// that made the promise (every initializer, operator, combinator and timer takes `file:` and `line:`), where
  /// its chain began if elsewhere, and the error:
  ///
  /// ```
  /// warning: ResultPromise<User, APIError> made at App/Loader.swift:38 (its chain began at App/Loader.swift:36) failed with APIError.offline, and nothing heard it.
  /// ```
  ///
  /// In release builds the default is `nil`, and no report is built. An app may send the reports to its
  /// crash reporter as non-fatal errors:
  ///
  /// ```swift
  /// PromiseDiagnostics.unheardFailureHandler = { error, message in
  ///     CrashReporter.recordNonFatal(error, reason: message)
  /// }
  /// ```
  ///
  /// The handler runs on the thread that releases the promise, inside its deinitialiser, perhaps while a
  /// chain is settling: it must not block. A report made on that thread while a handler runs there is
  /// dropped, not nested, so a handler that sends the report through the app's own promises (which may fail
  /// and be dropped in turn) does not recurse. With no handler set, a report costs a lock and a check. The report is exact for promises
  /// that are released: one kept alive for good (by a cache, a retain cycle, or still alive at `exit()`)
  /// is never reported. Safe to read and set from any thread.
  public static var unheardFailureHandler: (@Sendable (_ failure: any Error, _ message: String) -> Void)? {
    get { _Lock(for: hook).withLock { hook.unheard } }
    set { _ = _Lock(for: hook).withLock { exchange(&hook.unheard, with: newValue) } }
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
}

// MARK: - How it works
//
// State. A promise is pending, then settled with its outcome, which never changes again. Its observers
// wait in `_first` (the common single observer, without an array) and `_more`. Registering tells where an
// observer went, so that whoever stops waiting can take it back while the promise is pending (the
// cancellation file's `_withdraw`): it leaves `_first` empty, or a gap in `_more`, which delivery skips. All of it is guarded by
// the promise's lock (`_withLock`): off Apple platforms a word of its own, which fits in padding; on them
// a stripe of a fixed table (`_Lock`), shared with others whose addresses hash to it. Either way no
// allocation per promise. No lock is ever held while user code runs or while another is taken, so nothing
// deadlocks.
//
// Delivery. Settling a promise that has observers schedules a *delivery*, which runs in rounds: a round
// takes the observers waiting at its start (under the lock) and calls them in order (without it). An
// observer added while a delivery is scheduled or running, from any thread, joins it instead of running
// at once on its own thread: at the end of a round the delivering thread checks for joiners and
// schedules another round. So observers run in registration order, and those of a delivery one at a
// time. Only a settled promise with no delivery under way calls a new observer at once, on the caller's
// thread (two callers may thus run theirs at the same time). `_phase` says which of these holds.
// The common delivery — one observer, as in every step of a chain — takes one lock fewer: from
// settlement until its first round has taken it, `_first` is that round's alone (joiners wait in
// `_more`), so the round takes it without the lock, and checks for joiners once, at its end.
//
// The trampoline: stack safety and order on one thread. Deliveries are not run by recursion. Each
// thread has a first-in-first-out queue of jobs (`_Trampoline`); the outermost call on a thread runs
// its job and then drains the queue in a loop, and anything set off meanwhile (a `fulfil` inside an
// observer, a registration on a settled promise) is appended to the queue. A chain of a million steps
// thus settles in one loop, at constant stack depth. A job holds its promise, so an observer only ever
// runs while its promise is alive.
//
// Steps. Every operator is one `_chain` call. On a pending promise, the next promise *is* the step: a
// `_Step`, a subclass that holds the operator's transform until the result comes, and whose observer
// captures only the step itself, so Swift needs no closure context: one allocation per step. (That is
// why `ResultPromise` is a class that can be subclassed inside the library, never outside: `public`,
// not `open`, with `final` members.) On a promise that can deliver at once, the step runs on a plain
// promise, with nothing stored. The operator's closure is handed over, not copied: from the caller to the
// step, and from the step to the call that runs it, which releases it (with what it captured) once done.
//
// Release. Each observer of a pending chain holds the next promise, so releasing a long pending chain
// would free it recursively; `deinit` hands the observers to the trampoline's graveyard, which releases
// them in a loop instead.
//
// Extras. A few promises need more than their state: a queue for their observers (`receive(on:)`), or a
// record through which a request to cancel reaches their work (`ResultPromise+Cancellation.swift`, which
// this file does not need). Both live in one optional field, `_extras`, so every other promise pays for
// one `nil`: a step made from a promise without extras handles no reference at all, and `fulfil` checks
// for `nil`. The core tells the extras when a promise is made from this one, when this one settles, and
// when it adopts another's outcome, each time with the promise's depth (`_depth`: where it sits among
// promises that share extras, as a chain's steps share a cancellation record); here those calls do
// nothing. A step asks `_Extras.forStep` for its extras and depth, saying whether it adopts another promise
// (`thenAsync`, `recoverAsync`): the cancellation file overloads it to share the input's record along a
// chain, and to give an adopting step a record even when its input has none, since the promise it adopts
// may be cancellable.
//
// Overload ranking ties the families together, not protocols (a witness would run unspecialised): a generic
// fallback in one file, and a more specific overload in another that Swift prefers wherever both are in the
// module. Should the preferred one stop winning, the fallback runs without a word, so each has a test (the
// cancellation suite's "Overload ranking"):
// - `_Extras.forStep`: the fallback (here) gives a step its input's dependent; the cancellation file's shares
//   the input's record, and gives an adopting step one. Fallen back, a `thenAsync` step from a value cannot
//   be cancelled, and a cancellable step costs two allocations (CI's malloc thresholds).
// - `_Extras.requestCancel`: the fallback (the main-actor file) does nothing; the cancellation file's calls
//   `cancel()`. Fallen back, `onMainActor.cancel()` stops nothing.
// - `_Extras.abandoning`: the fallback (the main-actor file) returns the promise; the cancellation file's
//   makes the caller's promise. Fallen back, `onMainActor.abandoningOnCancel` never fails on a request.
//
// Why a base class holds the storage: a class's `deinit` is never specialised, and destroying a field
// whose type is built from generic parameters (such as `Result<Success, Failure>?`) makes it look that
// type's metadata up at run time, on every release. A field whose type *is* a generic parameter
// (`Outcome`) needs no lookup.

/// The storage of a ``ResultPromise``; not for use outside the library.
///
/// A base class only so that the outcome's type is one of its generic parameters (see "How it works"
/// in the source). Every mutable field is read and written only under `_withLock`, except
/// `_outcome` after settlement, when it no longer changes. `@exclusivity(unchecked)`: the lock already
/// rules out overlapping accesses, and the dynamic checks would cost more than the rest of a delivery.
public nonisolated class _PromiseStorage<Success, Failure: Error, Outcome> {
  // The fields whose types do not depend on the outcome's come first: their offsets are then fixed, so the
  // (unspecialised) `deinit` reads and releases them without looking their offsets up. Those after `_outcome`
  // fill its tail padding.
  /// The first waiting observer, stored inline so the common single-observer case needs no array.
  @exclusivity(unchecked) @usableFromInline final var _first: _Observer<Success, Failure>?
  /// Further waiting observers, in registration order; while pending, set only when `_first` is or was (it
  /// may have been withdrawn). `nil`, never empty, when there are none: freeing a promise then releases
  /// nothing for it (an empty array costs a call).
  @exclusivity(unchecked) @usableFromInline final var _more: [_Waiter<Success, Failure>]?
  /// What few promises need: the queue their observers run on, how a request to cancel reaches their work.
  @usableFromInline final let _extras: _Extras?
  /// The outcome once settled (`Result<Success, Failure>?` in ``ResultPromise``).
  @exclusivity(unchecked) @usableFromInline final var _outcome: Outcome
  /// Pending, settled, or where the delivery of the outcome stands.
  @exclusivity(unchecked) @usableFromInline final var _phase: _Phase
  /// What its reports need: whether dropping it while pending is reported, whether it failed, whether
  /// anything heard that.
  @exclusivity(unchecked) @usableFromInline final var _flags: _Flags
  /// Where the promise sits among those that share its extras (0: they are its own); see `_Extras`. A byte,
  /// which fits in padding beside the two above.
  @usableFromInline final let _depth: UInt8
  #if canImport(Darwin)
    /// Runs `body` holding this promise's lock: its stripe of the shared table (see `_Lock`).
    @inlinable final func _withLock<T>(_ body: () -> T) -> T { _Lock(for: self).withLock(body) }
  #else
    /// This promise's lock: a word of its own, in what would otherwise be padding (see `_Lock`).
    @usableFromInline final let _word = Atomic<UInt32>(0)
    /// Runs `body` holding this promise's lock.
    @inlinable final func _withLock<T>(_ body: () -> T) -> T { _Lock.withLock(_word, body) }
  #endif
  #if DEBUG
    /// Where the promise was made (the initializer, operator, combinator or timer called), and where its chain
    /// began (`nil`: here), for its reports; see `_made(at:_:from:)`. Debug builds only: release builds spend
    /// no memory on it. Set once, before the promise is shared.
    @usableFromInline final var _origin: (made: _Site, chain: _Site?)?
  #endif

  @inlinable init(outcome: Outcome, phase: _Phase, flags: _Flags, extras: _Extras?, depth: UInt8 = 0) {
    (_outcome, _phase, _flags, _extras, _depth) = (outcome, phase, flags, extras, depth)
  }

  deinit {
    // Only a pending promise still holds observers: a settled one has delivered them.
    guard _first != nil || _more != nil else {
      if _flags.intersection([.failed, .heard]) == .failed {
        PromiseDiagnostics._report(self)
      }
      return
    }
    if _flags.contains(.reportsBroken) {
      PromiseDiagnostics._report(self) {
        "was deallocated while pending; its \(self._observerCount) will never be called."
      }
    }
    _Trampoline.withCurrent { $0.bury((_first.take(), _more.take())) }
  }

  /// "1 observer", "2 observers"…: how many wait, for the broken-promise report.
  @usableFromInline final var _observerCount: String {
    let count = (_first == nil ? 0 : 1) + (_more?.lazy.filter { $0.observer != nil }.count ?? 0)
    return "\(count) observer\(count == 1 ? "" : "s")"
  }
}

// MARK: - Delivery

/// Where a promise stands:
/// - `pending`: not settled yet;
/// - `settled`: no delivery under way, so a new observer runs at once;
/// - `firstRound`: the first round of a delivery that began with one observer is scheduled or running; it
///   owns `_first`, and observers added meanwhile go to `_more`;
/// - `scheduled`: a delivery round is scheduled and will take the waiting observers;
/// - `running`: a round is running, and another is scheduled when it ends if observers joined;
/// - `claimed`: pending, but settled only by the caller that claimed it (`_fulfil(claiming:)`), which is
///   working out the outcome; `fulfil` finds it settled.
@usableFromInline nonisolated enum _Phase: UInt8 {
  case pending, settled, firstRound, scheduled, running, claimed
}

/// A place in the source, for the reports of debug builds.
@usableFromInline typealias _Site = (file: StaticString, line: UInt)

/// What a promise's reports need to know, in one byte.
@usableFromInline nonisolated struct _Flags: OptionSet {
  @usableFromInline let rawValue: UInt8
  @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }
  /// Made by the user, and not yet reported as broken: dropping it while pending is reported.
  @inlinable static var reportsBroken: Self { Self(rawValue: 1) }
  /// Settled with a failure.
  @inlinable static var failed: Self { Self(rawValue: 2) }
  /// Its failure was or will be heard: something that receives failures was registered, it was adopted, its
  /// settled result was read, or it was asked to cancel while pending.
  @inlinable static var heard: Self { Self(rawValue: 4) }
}

/// A waiting observer as the promise stores it. Not `@Sendable`: the public API takes `@Sendable`
/// closures where they may run on another thread; the library's own observers capture the promises of
/// a chain, which are `Sendable` only when their values are.
///
/// A struct, not a bare closure: a closure passed through generic code (an array, `Optional.take()`,
/// `withLock`) is stored behind a reabstraction thunk, one allocation each; a struct is not.
@usableFromInline nonisolated struct _Observer<Success, Failure: Error> {
  @usableFromInline let call: (Result<Success, Failure>) -> Void
  @inlinable init(_ call: @escaping (Result<Success, Failure>) -> Void) { self.call = call }
}

/// An observer waiting in `_more`, with its number: one more than the one before it, so numbers grow along the
/// array, and `_withdraw` finds one by a binary search. A withdrawn observer leaves a gap (`nil`), so that the
/// others keep their places. The array starts with a *head*, a gap whose number, `-1 - gaps`, counts the gaps
/// behind it (and stays below every observer's number). Gaps at the end are dropped at once; the others once
/// they outnumber the observers, or when the array is full: whatever order callers leave in, the array keeps
/// at most twice the observers still waiting, in amortised O(1) per withdrawal.
@usableFromInline nonisolated struct _Waiter<Success, Failure: Error> {
  @usableFromInline var observer: _Observer<Success, Failure>?
  @usableFromInline var number: Int

  @inlinable init(_ observer: _Observer<Success, Failure>?, number: Int) {
    (self.observer, self.number) = (observer, number)
  }

  /// A head with no gaps behind it: the first number after it is 0.
  @inlinable static var head: Self { Self(nil, number: -1) }

  /// For the head: how many gaps are behind it.
  @inlinable var gaps: Int { -1 - number }

  /// Appends `observer` to `waiters` (made if `nil`) and returns its number. A full array first loses its
  /// gaps, and doubles unless that freed half of it, so this is amortised O(1).
  @inlinable static func append(_ observer: _Observer<Success, Failure>, to waiters: inout [Self]?) -> Int {
    var all = waiters.take() ?? [.head]
    let number = all[all.count - 1].number + 1
    if all.count == all.capacity {
      if all[0].gaps > 0 { compact(&all) }
      if all.count > all.capacity / 2 { all.reserveCapacity(all.capacity * 2) }
    }
    all.append(Self(observer, number: number))
    waiters = all
    return number
  }

  /// Drops every gap, keeping the head (with none behind it now).
  @inlinable static func compact(_ all: inout [Self]) {
    all.removeAll { $0.observer == nil }
    all.insert(.head, at: 0)
  }
}

/// The transform of a `thenAsync` or `recoverAsync` step, as the step stores it. A struct, for the reason
/// `_Observer` is one: stored as a bare generic value, a function that returns a promise would be kept
/// behind a reabstraction thunk, one allocation per step whose closure captures anything. The operators'
/// `apply` closures name their arguments `$0` (this), `$1` (the observed result) and `$2` (the next promise).
@usableFromInline nonisolated struct _Make<Argument, Success, Failure: Error> {
  @usableFromInline let call: (Argument) -> ResultPromise<Success, Failure>
  @inlinable init(_ call: @escaping (Argument) -> ResultPromise<Success, Failure>) { self.call = call }
}

nonisolated extension ResultPromise {
  /// `await` for the library's own observers, which need not be `@Sendable` (see `_Observer`); one that
  /// ignores failures does not `hear` them. Returns the observer's place, with which `_withdraw` takes it
  /// back, or `nil` if it has run already.
  @inlinable @discardableResult func _await(
    hearing hears: Bool = true, _ observer: @escaping (Result<Success, Failure>) -> Void
  ) -> Int? {
    var place = 0
    guard let result = _register({ _Observer(observer) }, place: &place, hearing: hears) else { return place }
    _Trampoline.withCurrent { $0.runAsCallback { observer(result) } }
    return nil
  }

  /// Settles with `result` if the promise is in phase `expected` (`pending`, or `claimed` by this caller).
  /// Returns whether it did.
  @inlinable @inline(__always) final func _settle(
    with result: Result<Success, Failure>, from expected: _Phase
  ) -> Bool {
    // nil: already settled; otherwise the phase the promise settled into.
    let phase: _Phase? = _withLock {
      guard _phase == expected else { return nil }
      _outcome = result
      if case .failure = result { _flags.insert(.failed) }
      _phase = _first == nil && _more == nil ? .settled : _more == nil ? .firstRound : .scheduled
      return _phase
    }
    if phase != nil { _extras?.settled(at: _depth) }
    if let phase, phase != .settled { _scheduleDelivery(phase) }
    return phase != nil
  }

  /// Chains a step: returns a new promise, and once this one settles calls
  /// `apply(transform, result, next)`, which settles the new promise.
  ///
  /// On a pending promise the new promise is the step itself (`_Step`), and its observer captures only
  /// it: one allocation per step. A promise that can deliver at once runs the step directly, on a plain
  /// promise, with nothing stored. The new promise gets the extras this one's make for a dependent.
  ///
  /// `transform` is moved, never copied: into the step, or straight into `apply`, which consumes it. The
  /// operators take it `__owned` and pass it on with `consume`, so a closure literal is handed over from the
  /// caller. (Not `consuming`: with that, Swift 6.3 released a function reference passed to a pending
  /// promise's `then` twice in unoptimised builds; a test in the core's suite covers it.)
  /// The step `apply(transform, result, next)`, made at `file`:`line`; its promise `startsHeard` where the
  /// step itself hears the failure it passes on (`always`).
  @inlinable @inline(__always) final func _chain<Transform, NewSuccess, NewFailure>(
    _ transform: __owned Transform, adopts: Bool = false, startsHeard: Bool = false,
    at file: StaticString, _ line: UInt,
    _ apply: @escaping _Step<Success, Failure, NewSuccess, NewFailure, Transform, Transform?>.Apply
  ) -> ResultPromise<NewSuccess, NewFailure> {
    // `made` is consumed into an `Unmanaged`, which exactly one of the two promises below takes: never copied,
    // so a chain that cannot be cancelled handles no reference at all, and a cancellable one no extra one.
    let (made, depth) = _Extras.forStep(from: _extras, at: _depth, adopts: adopts)
    let extras = (consume made).map(Unmanaged.passRetained)
    var step: _Step<Success, Failure, NewSuccess, NewFailure, Transform, Transform?>?
    var slot = Optional(consume transform)
    var place = 0
    guard
      let result = _register(
        {
          step = _Step(slot.take(), apply, extras?.takeRetainedValue(), depth, startsHeard ? .heard : [])
          step.unsafelyUnwrapped._made(at: file, line, from: self)
          return _Observer { [waiting = step.unsafelyUnwrapped] in waiting._run($0) }
        }, place: &place)
    else { return step.unsafelyUnwrapped }
    let next = ResultPromise<NewSuccess, NewFailure>(
      _pending: extras?.takeRetainedValue(), depth: depth, flags: startsHeard ? .heard : [])
    next._made(at: file, line, from: self)
    // Not through `withCurrent`, generic over its result: in its closure, this one made the compiler box
    // `transform` (a reabstraction thunk, one allocation per `thenAsync` step). Nor on the trampoline taken
    // out of its `Unmanaged`, which would be retained and released.
    _Trampoline.current._withUnsafeGuaranteedRef { $0.runAsCallback { apply(slot.take()!, result, next) } }
    return next
  }

  /// Adds the observer that `observer()` makes, and sets `place` to where it went (-1: `_first`; otherwise
  /// its number in `_more`), or returns the result to call it with at once on this thread, without making
  /// it: when the promise is settled, no delivery is under way, it has no extras (its observers run
  /// synchronously, and nothing needs counting) and no callback is running on this thread. Otherwise a
  /// settled promise delivers through the thread's queue of work, at once if it is idle. An observer that
  /// receives failures (`hears`) marks the failure heard.
  @inlinable @inline(__always) func _register(
    _ observer: () -> _Observer<Success, Failure>, place: inout Int, hearing hears: Bool = true
  ) -> Result<Success, Failure>? {
    var schedules: _Phase?
    let now: Result<Success, Failure>? = _withLock {
      if hears { _flags.insert(.heard) }
      if _phase == .settled, _extras == nil, !_Trampoline.withCurrent({ $0.isDraining }) { return _outcome }
      // Added on the thread running the first round (from inside its observer): those who joined before
      // still run in that round, so they wait in `_first` (free once that round has taken its observer),
      // while this one starts the next round. See `_deliver`.
      let here = _phase == .firstRound && _Trampoline.withCurrent { $0.isRunning(self) }
      if here, let more = _more {
        (_first, _more) = (_Observer { for waiter in more { waiter.observer?.call($0) } }, nil)
      }
      let first = _phase != .firstRound && _first == nil && _more == nil
      if first { _first = observer() }
      place = first ? -1 : _Waiter.append(observer(), to: &_more)
      // A settled promise starts a delivery (on this thread's queue, or on its own queue). A running
      // round is followed at once by the next if it runs on this thread, to keep first-in-first-out
      // order with this thread's other queued work, or on a serial queue; any other round runs those
      // who joined when it ends.
      switch _phase {
      case .settled: schedules = .firstRound
      case .running where _extras?.queue != nil || _Trampoline.withCurrent { $0.isRunning(self) },
        .firstRound where here:
        schedules = .scheduled
      default: return nil
      }
      _phase = schedules.unsafelyUnwrapped
      return nil
    }
    if let schedules { _scheduleDelivery(schedules) }
    return now
  }

  /// Runs a delivery round (the first round if `phase` says so) where this promise's observers run:
  /// through the current thread's queue of work, or on `_queue`.
  @inlinable func _scheduleDelivery(_ phase: _Phase) {
    // The job is made where it is run, and so handed over: made outside the closure, it would be copied in
    // (one more retain and release of the promise per delivery).
    guard let queue = _extras?.queue else { return _Trampoline.withCurrent { $0.run(_round(phase)) } }
    queue.async { [job = _round(phase)] in _Trampoline.withCurrent { $0.run(job) } }
  }

  @inlinable func _round(_ phase: _Phase) -> _Job {
    phase == .firstRound
      ? _Job(self) { unsafeDowncast($0, to: ResultPromise<Success, Failure>.self)._deliver(first: true) }
      : _Job(self) { unsafeDowncast($0, to: ResultPromise<Success, Failure>.self)._deliver(first: false) }
  }

  /// A delivery round: calls the observers waiting now. The first round of a delivery that began with
  /// one observer (`first`) takes it without the lock: from settlement until that round has taken it,
  /// `_first` is its alone (observers added meanwhile wait in `_more`). If more joined meanwhile, the first round
  /// runs them at once, as if it had taken them; a later round schedules another behind the work
  /// already queued. Otherwise the delivery ends.
  @inlinable func _deliver(first: Bool) {
    let result = _outcome.unsafelyUnwrapped  // settled before any round, and never changed since
    if first {
      _first.take()?.call(result)
    } else {
      let (head, rest) = _withLock {
        _phase = .running
        return (_first.take(), _more.take() ?? [])  // every waiting observer, leaving none
      }
      head?.call(result)
      for waiter in rest { waiter.observer?.call(result) }
    }
    let another: Bool? = _withLock {
      guard _phase == (first ? .firstRound : .running) else { return nil }  // a round is scheduled
      _phase = _first == nil && _more == nil ? .settled : .scheduled
      return _phase == .scheduled
    }
    // With the next round scheduled already, a first round still runs those who joined before (`_register`).
    if another == nil, first { _withLock { _first.take() }?.call(result) }
    if another == true { first ? _deliver(first: false) : _scheduleDelivery(.scheduled) }
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

  /// Settles this promise like `other`: at once if `other` is settled and not delivering, otherwise as
  /// an observer of `other`, in order. A promise told to adopt itself could never settle; that is
  /// reported instead.
  @inlinable func _adopt(_ other: ResultPromise<Success, Failure>) {
    guard other !== self else {
      let problem = "was told to adopt itself (its own thenAsync or recoverAsync step returned it)"
      return PromiseDiagnostics._report(self) { "\(problem); it can never settle." }
    }
    if other._extras != nil { _extras?.adopt(other._extras, at: other._depth, for: _depth) }
    guard let result = other._hear(if: other._phase == .settled) else {
      other._await { self.fulfil(with: $0) }
      return
    }
    fulfil(with: result)
  }

  /// Marks the failure heard if `now` holds under the lock, and then returns the outcome (`nil` while
  /// pending). Whoever reads a settled promise's outcome hears its failure; so does whoever asks a pending
  /// promise to cancel (its failure answers the request), and `always`, whose closure heard it.
  @inlinable @discardableResult func _hear(if now: @autoclosure () -> Bool) -> Result<Success, Failure>? {
    _withLock {
      guard now() else { return nil }
      _flags.insert(.heard)
      return _outcome
    }
  }

  /// In debug builds, records for its reports that this promise was made at `file`:`line` from `input`, whose
  /// chain it continues (without `input`, it begins a chain). Release builds store nothing, and the optimiser
  /// drops the arguments of an inlined caller.
  @inlinable @discardableResult final func _made<S, F>(
    at file: StaticString, _ line: UInt, from input: ResultPromise<S, F>? = ResultPromise<Never, Never>?.none
  ) -> Self {
    #if DEBUG
      _origin = ((file, line), input?._origin.map { $0.chain ?? $0.made })
    #endif
    return self
  }
}

/// The `fulfil` function's hold on its promise, for `init(_ start:)`: the one object that function
/// captures. Released while the promise is still pending and held elsewhere (by a waiting task, say),
/// it reports that the promise can never settle; if it held the last reference, the promise's own
/// `deinit` reports instead, so a promise is reported at most once.
///
/// `@unchecked Sendable`: the closure only calls `fulfil(with:)`, which is thread-safe, with a result
/// that is `Sendable` or that the caller has given up (`sending`); it reads nothing else of the promise.
@usableFromInline final nonisolated class _Resolver<Success, Failure: Error>: @unchecked Sendable {
  @usableFromInline var promise: ResultPromise<Success, Failure>
  @inlinable init(_ promise: ResultPromise<Success, Failure>) { self.promise = promise }

  deinit {
    guard !isKnownUniquelyReferenced(&promise) else { return }
    let waiting: String? = promise._withLock {  // and no other report after this one
      let reports = promise._flags.remove(.reportsBroken) != nil
      return reports && promise._phase == .pending ? promise._observerCount : nil
    }
    let problem = "is pending, but its fulfil function was released uncalled, so it can never settle"
    if let waiting { PromiseDiagnostics._report(promise) { "\(problem) (\(waiting) waiting)." } }
  }
}

/// A pending step of a chain and the promise it settles, in one object: it holds the step's transform
/// until the promise it observes settles, then applies it and lets it go (with what it captured).
///
/// `Slot` is always `Transform?`. A field whose type is a generic parameter needs no metadata lookup in
/// the (never specialised) `deinit`; one typed `Transform?` would look `Optional<Transform>` up on every
/// release.
@usableFromInline
final nonisolated class _Step<Input, InputFailure: Error, Success, Failure: Error, Transform, Slot>:
  ResultPromise<Success, Failure>
{
  @usableFromInline typealias Apply = (
    consuming Transform, Result<Input, InputFailure>, ResultPromise<Success, Failure>
  ) -> Void
  @exclusivity(unchecked) @usableFromInline var _transform: Slot
  @usableFromInline let _apply: Apply

  @inlinable init(
    _ transform: Slot, _ apply: @escaping Apply, _ extras: _Extras?, _ depth: UInt8, _ flags: _Flags
  ) {
    (_transform, _apply) = (transform, apply)
    super.init(_pending: extras, depth: depth, flags: flags)
  }
}

// `@unchecked Sendable` as `ResultPromise` is; `_transform` is set before the step is shared and then
// read and cleared once, by the delivery of the promise it observes.
nonisolated extension _Step: @unchecked Sendable where Success: Sendable {}

nonisolated extension _Step where Slot == Transform? {
  /// Applies the step to the observed promise's `result`, once. Only the observed promise's delivery
  /// calls it, on one thread, so `_transform` needs no lock.
  @inlinable func _run(_ result: Result<Input, InputFailure>) {
    _apply(_transform.take().unsafelyUnwrapped, result, self)
  }
}

/// What a few promises need beside their state (see "Extras" in "How it works"): the queue their observers
/// run on (this class alone, as `receive(on:)` makes it), and how a request to cancel reaches their work
/// (the cancellation record, a subclass). The core calls three methods, which here do nothing: a promise is
/// made from this one (`dependent(on:at:)`, with the new promise's queue), this one settles (`settled(at:)`),
/// and it adopts another promise's outcome (`adopt(_:at:for:)`); and it asks `forStep` for a step's extras and
/// depth. Several promises may share one extras object, each at its own depth (`_depth`, passed to each
/// call): the cancellation file shares a record along a chain. Elsewhere the depth is 0.
///
/// `@unchecked Sendable`: its own state, the queue, never changes; subclasses say why theirs is safe.
@usableFromInline nonisolated class _Extras: @unchecked Sendable {
  @usableFromInline final let queue: DispatchQueue?  // stored, not computed: read without a call or a retain
  @usableFromInline init(queue: DispatchQueue?) { self.queue = queue }
  @usableFromInline func dependent(on queue: DispatchQueue?, at depth: UInt8) -> _Extras? { nil }
  // The extras of a step made from a promise with `input` (`adopts`: a `thenAsync` or `recoverAsync` step).
  // A trick of overload ranking: the cancellation file declares a non-generic `forStep` with the same
  // labels, which Swift prefers wherever both are visible — every call in the module, this file's own
  // included — and which shares records along a chain and always gives an adopting step one. Copied alone,
  // this file calls this generic fallback: what the input's extras make for a dependent, which shares
  // nothing.
  @inlinable static func forStep<E: _Extras>(
    from input: E?, at depth: UInt8, adopts: Bool
  ) -> (_Extras?, UInt8) { (input?.dependent(on: nil, at: depth), 0) }
  @usableFromInline func settled(at depth: UInt8) {}
  @usableFromInline func adopt(_ other: _Extras?, at depth: UInt8, for step: UInt8) {}
}

// MARK: - The trampoline

/// Work for a thread's queue: `run(target)`.
///
/// `run` is a closure literal written in `@inlinable` code, so the client specialises it and, with no
/// generic context left to capture, it needs no allocation. (A protocol witness would run the
/// library's unspecialised generic code instead, which costs several times more per delivery.)
///
/// `@unchecked Sendable`: a job is run once, by the one thread or queue it is handed to. Only promises
/// made by `receive(on:)`, whose values are `Sendable`, hand jobs to a queue.
@usableFromInline nonisolated struct _Job: @unchecked Sendable {
  @usableFromInline let (target, run): (AnyObject, (AnyObject) -> Void)

  @inlinable init(_ target: AnyObject, _ run: @escaping (AnyObject) -> Void) {
    (self.target, self.run) = (target, run)
  }
}

/// The per-thread queue of jobs that keeps delivery and release at constant stack depth.
///
/// `isDraining` is true while this thread runs a callback or a job; work set off meanwhile is queued and
/// run by the outermost caller's loop. Likewise `bury` frees a released chain one link per loop turn.
/// Each instance is reached only from its own thread (through thread-local storage), so its fields are
/// `@exclusivity(unchecked)`: never accessed in overlapping ways.
@usableFromInline final nonisolated class _Trampoline {
  @exclusivity(unchecked) @usableFromInline var isDraining = false
  /// The target of the job running now, if any (compared by address only).
  @exclusivity(unchecked) @usableFromInline var running: UnsafeMutableRawPointer?
  /// A ring buffer of queued jobs: `count` of them from `head` on, wrapping around. Its capacity is a
  /// power of two. Raw memory, so that a job is moved in and out rather than copied and released.
  @exclusivity(unchecked) private var jobs = UnsafeMutablePointer<_Job>.allocate(capacity: 16)
  @exclusivity(unchecked) private var (capacity, head, count) = (16, 0, 0)
  @exclusivity(unchecked) private var (graveyard, isBurying): ([Any], Bool) = ([], false)
  /// Whether this thread runs a report handler (`PromiseDiagnostics._report`).
  @exclusivity(unchecked) fileprivate var isReporting = false

  /// Calls `body` with the calling thread's trampoline, made on first use and released when the thread
  /// exits. The thread's own reference keeps it alive, so it is not retained for the call.
  @inlinable static func withCurrent<T>(_ body: (_Trampoline) -> T) -> T {
    current._withUnsafeGuaranteedRef(body)
  }

  /// The calling thread's trampoline: a lookup, inlined at every use.
  @inlinable static var current: Unmanaged<_Trampoline> {
    pthread_getspecific(key).map { .fromOpaque($0) } ?? makeCurrent()
  }

  /// Makes the calling thread's trampoline, on its first use. Never inlined: it runs once a thread, and
  /// inlined into the unspecialised `deinit` it made every release save two more registers.
  @usableFromInline @inline(never) static func makeCurrent() -> Unmanaged<_Trampoline> {
    let trampoline = Unmanaged.passRetained(_Trampoline())
    pthread_setspecific(key, trampoline.toOpaque())
    return trampoline
  }

  @usableFromInline static let key: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in  // non-optional on Darwin, optional elsewhere
      (pointer as UnsafeMutableRawPointer?).map { Unmanaged<_Trampoline>.fromOpaque($0).release() }
    }
    precondition(status == 0, "ResultPromise: pthread_key_create failed (\(status))")
    return key
  }()

  /// Queues `job` behind the work waiting on this thread, or, if none is running, runs it now and then
  /// everything it sets off. The one place where work is queued or run.
  @usableFromInline func run(_ job: consuming _Job) {
    guard !isDraining else { return enqueue(job) }
    runAsCallback { call(job) }
  }

  /// Calls `job`, noting its target so that `isRunning` can tell.
  @inlinable func call(_ job: _Job) {
    running = Unmanaged.passUnretained(job.target).toOpaque()
    job.run(job.target)
    running = nil
  }

  /// Whether the job running on this thread now is `target`'s (for a promise: a round of its delivery).
  @inlinable func isRunning(_ target: AnyObject) -> Bool {
    running == Unmanaged.passUnretained(target).toOpaque()
  }

  /// Runs `body` as a callback — work it sets off is queued — then the queue. Only when not draining.
  @inlinable func runAsCallback<T>(_ body: () -> T) -> T {
    isDraining = true
    defer { drain() }
    return body()
  }

  /// Runs queued jobs until none is left, then leaves the draining state.
  @usableFromInline func drain() {
    while count > 0 {
      let job = (jobs + head).move()
      (head, count) = ((head + 1) & (capacity - 1), count - 1)
      call(job)
    }
    isDraining = false
  }

  private func enqueue(_ job: consuming _Job) {
    if count == capacity {
      let grown = UnsafeMutablePointer<_Job>.allocate(capacity: capacity * 2)
      grown.moveInitialize(from: jobs + head, count: capacity - head)
      (grown + capacity - head).moveInitialize(from: jobs, count: head)
      jobs.deallocate()
      (jobs, head, capacity) = (grown, 0, capacity * 2)
    }
    (jobs + ((head + count) & (capacity - 1))).initialize(to: job)
    count += 1
  }

  // Runs when the thread exits, after its outermost call has drained the queue: no job is left.
  deinit { jobs.deallocate() }

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

// MARK: - Locking

/// One of a fixed table of locks, picked by an object's address.
///
/// Each object that needs a lock uses the stripe its address hashes to — except, off Apple platforms, a
/// promise (`_withLock`) and a cancellation record, which have a word of their own (`_Lock.withLock(_:_:)`):
/// it fits in padding, and saves the table's lookup on each of a chain step's locks. This costs no memory or
/// allocation per object, and is deadlock-free because none of these locks is held while another lock is
/// taken or while user code runs. (What must run user code under a lock — a registry hashing its keys — has a
/// lock of its own, which nothing else takes.) On Apple platforms these are `pthread` mutexes. Elsewhere a
/// lock is one atomic word, taken with an exchange and released with a store: a fraction of the cost of
/// glibc's mutex. A thread that finds it taken yields the processor until it is free, rather than spinning:
/// it is held only briefly (a few stores, at most an allocation), but its holder may have been preempted.
/// ThreadSanitizer sees both (the atomics are compiled into this code; it would not see the prebuilt
/// `Synchronization.Mutex`).
@usableFromInline nonisolated struct _Lock {
  #if canImport(Darwin)
    @usableFromInline typealias Word = pthread_mutex_t
  #else
    @usableFromInline typealias Word = Atomic<UInt32>
  #endif
  @usableFromInline let word: UnsafeMutablePointer<Word>

  @inlinable init(for object: AnyObject) {
    let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
    let stripe = Int(truncatingIfNeeded: (address >> 4) ^ (address >> 12)) & 63
    word = (_Lock.table + stripe * 64).assumingMemoryBound(to: Word.self)
  }

  @inlinable func withLock<T>(_ body: () -> T) -> T {
    #if canImport(Darwin)
      pthread_mutex_lock(word)
      defer { pthread_mutex_unlock(word) }
      return body()
    #else
      return _Lock.withLock(word.pointee, body)
    #endif
  }

  #if !canImport(Darwin)
    /// Runs `body` holding the lock that is `word` (an object's own, or a stripe of the table).
    @inlinable static func withLock<T>(_ word: borrowing Atomic<UInt32>, _ body: () -> T) -> T {
      while word.exchange(1, ordering: .acquiring) != 0 { sched_yield() }
      defer { word.store(0, ordering: .releasing) }
      return body()
    }
  #endif

  /// The locks, 64 of them, each on its own 64-byte cache line. `nonisolated(unsafe)`: they are made
  /// once, never moved or freed, and are themselves the synchronisation.
  @usableFromInline nonisolated(unsafe) static let table: UnsafeMutableRawPointer = {
    let table = UnsafeMutableRawPointer.allocate(byteCount: 64 * 64, alignment: 64)
    for index in 0..<64 {
      let word = (table + index * 64).bindMemory(to: Word.self, capacity: 1)
      #if canImport(Darwin)
        pthread_mutex_init(word, nil)
      #else
        word.initialize(to: Atomic(0))
      #endif
    }
    return table
  }()
}

// MARK: - Diagnostics

nonisolated extension PromiseDiagnostics {
  /// Where the handler lives. `@unchecked Sendable`: `handler` is only used while its lock is held.
  fileprivate final class Hook: @unchecked Sendable {
    #if DEBUG
      var handler: (@Sendable (String) -> Void)? = PromiseDiagnostics.writeToStandardError
      var unheard: (@Sendable (any Error, String) -> Void)? = { PromiseDiagnostics.writeToStandardError($1) }
    #else
      var handler: (@Sendable (String) -> Void)?  // none in release builds
      var unheard: (@Sendable (any Error, String) -> Void)?
    #endif
  }

  fileprivate static let hook = Hook()

  /// Reports `promise` — its type, where it was made and where its chain began (debug builds), then
  /// `problem` — as broken, or, without a `problem`, its failure as unheard. The handler is looked at first:
  /// with none set (the release-build default), nothing is built or looked up. A report made while this thread runs a handler
  /// is dropped, so a handler that drops a failing promise of its own does not recurse. Never inlined: in
  /// the unspecialised `deinit`, the registers it needs would cost every promise's release a few
  /// instructions.
  @usableFromInline @inline(never) static func _report<S, F, O>(
    _ promise: _PromiseStorage<S, F, O>, _ problem: (() -> String)? = nil
  ) {
    let (broken, heard) = _Lock(for: hook).withLock {
      problem == nil ? (nil, hook.unheard) : (hook.handler, nil)
    }
    guard broken != nil || heard != nil else { return }
    _Trampoline.withCurrent { trampoline in
      guard !trampoline.isReporting else { return }
      trampoline.isReporting = true
      defer { trampoline.isReporting = false }
      var name = "ResultPromise<\(S.self), \(F.self)>"
      #if DEBUG  // where it was made, and where its chain began if elsewhere
        if let (made, chain) = promise._origin {
          let here = "\(made.file):\(made.line)"
          let began = chain.map { "\($0.file):\($0.line)" } ?? here
          name += " made at \(here)" + (began == here ? "" : " (its chain began at \(began))")
        }
      #endif
      if let problem {
        broken?("\(name) \(problem())")
      } else if case .failure(let error) = promise._outcome as? Result<S, F> {
        heard?(error, "\(name) failed with \(String(reflecting: error)), and nothing heard it.")
      }
    }
  }
}
