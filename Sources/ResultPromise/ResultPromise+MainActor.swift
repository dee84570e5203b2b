// Main actor: the chain with `@MainActor` closures, for app code.
//
// App code runs on the main actor, and its callbacks touch main-actor state and objects that are not
// `Sendable` — which the `@Sendable` callbacks of `ResultPromise` may not. `promise.onMainActor` is a
// view of the same promise whose operations take `@MainActor` closures instead.
//
// How a closure gets to the main actor: each one is an ordinary observer of the underlying promise.
// When it is called on the main actor (the main thread, or a block on the main queue, which on Linux
// after `dispatchMain()` runs on another thread), it runs at once, as any observer does. Otherwise it
// is sent to the main queue, one hop. The main queue runs blocks first in, first out; and while a hop of
// a promise is waiting there, its later main-actor observers hop too instead of running at once — so
// they never overtake it (`_WaitingHops`). On the main queue a hop joins the thread's queue of work,
// like any delivery. The value never needs to be `Sendable`: the other observers that could see it run
// on the main actor too, since the plain operations that hand out the value require `Sendable`.
//
// Cancellation: the view's steps, and tasks awaiting its `value` or `result`, are dependents of the
// underlying promise like any other; this file only makes its promises from the core's hooks, and its
// `cancel()` calls the cancellation file's, when that file is in the module.
//
// This file needs only the core file, `ResultPromise.swift`, beside it.

import Dispatch

nonisolated extension ResultPromise {
  /// A view of this promise whose closures run on the main actor.
  ///
  /// ```swift
  /// @MainActor func showBand(id: Band.ID) {
  ///     store.band(id).onMainActor
  ///         .then { band in band.refreshed(in: context) }   // touches a non-Sendable model object
  ///         .await { result in self.state = .loaded(result) }   // touches main-actor state
  /// }
  /// ```
  ///
  /// Reading it is cheap and allowed from any isolation; the operations of the view are `@MainActor`.
  @inlinable public var onMainActor: MainActorPromise<Success, Failure> {
    MainActorPromise(self)
  }
}

/// A promise seen from the main actor: the same operations as ``ResultPromise``, with `@MainActor`
/// closures that may touch main-actor state and capture objects that are not `Sendable`.
///
/// ```swift
/// @MainActor final class BandViewModel {
///     var title = ""
///     func load(_ id: Int) {
///         store.band(id).onMainActor
///             .map { band in band.name }
///             .await { result in self.title = (try? result.get()) ?? "Unavailable" }
///     }
/// }
/// ```
///
/// Get one with ``ResultPromise/onMainActor`` and get back with ``promise`` (to return, combine or
/// await the underlying promise). Each operation returns a `MainActorPromise`, so the whole chain stays on
/// the main actor.
///
/// ## Where the closures run
/// Always on the main actor, exactly once each, in the order they were added:
/// - If the promise settles on the main actor (the main thread, or a block on the main queue), or has
///   already settled when a closure is added there, the closure runs synchronously, like any observer of a
///   ``ResultPromise``: before the outermost `fulfil` or the adding call returns, with work set off inside
///   it queued behind it.
/// - Otherwise it is delivered by one hop to the main queue. Closures added to the same promise later,
///   while such a hop is still waiting, hop behind it rather than overtake it.
///
/// Only `value` and `result` suspend; nothing else blocks.
public nonisolated struct MainActorPromise<Success, Failure: Error> {
  /// The underlying promise: return it, combine it, or observe it from other threads.
  ///
  /// ```swift
  /// func refresh(_ band: Band) -> ResultPromise<Band, StoreError> {
  ///     api.update(band.snapshot).onMainActor.map { saved in band.apply(saved) }.promise
  /// }
  /// ```
  public let promise: ResultPromise<Success, Failure>

  /// A main-actor view of `promise`; the same as `promise.onMainActor`.
  ///
  /// ```swift
  /// let view = MainActorPromise(store.band(id))
  /// ```
  /// - Parameter promise: The promise to observe and chain from the main actor.
  @inlinable public init(_ promise: ResultPromise<Success, Failure>) {
    self.promise = promise
  }
}

nonisolated extension MainActorPromise: Sendable where Success: Sendable {}

nonisolated extension MainActorPromise {
  /// Asks the work behind the underlying promise to stop, as ``ResultPromise/cancel()`` does.
  ///
  /// ```swift
  /// @MainActor final class ProfileModel {
  ///     var profile: Profile?
  ///     private var loading: MainActorPromise<Profile, APIError>?
  ///
  ///     func show(_ id: User.ID) {
  ///         loading?.cancel()   // the previous load, if it is still running
  ///         loading = api.profile(id).onMainActor.onSuccess { self.profile = $0 }
  ///     }
  /// }
  /// ```
  ///
  /// The view's steps are dependents like any other. Callable from any isolation (a `deinit`, say);
  /// handlers run on the calling thread, not hopped to the main actor. Copied without
  /// `ResultPromise+Cancellation.swift`, no promise can be cancelled, and this does nothing.
  public func cancel() {
    _Extras.requestCancel(promise)
  }

  /// A view for a caller who may leave: it settles like this one, or — when a request reaches it first —
  /// fails at once with `failure`, and lets the underlying promise go. As
  /// ``ResultPromise/abandoningOnCancel(with:file:line:)``; the view's steps then run on the main actor.
  ///
  /// ```swift
  /// @MainActor final class AvatarModel {
  ///     var image: Image?
  ///     private var loading: MainActorPromise<Image, LoadError>?
  ///
  ///     func show(_ url: URL) {
  ///         loading?.cancel()   // this model hears .cancelled now; the shared download goes on
  ///         loading = images.download(url).onMainActor
  ///             .abandoningOnCancel(with: .cancelled)
  ///             .onSuccess { self.image = $0 }
  ///     }
  /// }
  /// ```
  ///
  /// Callable from any isolation. Copied without `ResultPromise+Cancellation.swift`, nothing can be
  /// cancelled, and this returns a view of the same promise.
  /// - Parameters:
  ///   - failure: What the caller who left hears; evaluated only if a request decides.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view that settles like this one, or fails with `failure` on a request.
  public func abandoningOnCancel(
    with failure: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line
  ) -> MainActorPromise<Success, Failure> {
    MainActorPromise(_Extras.abandoning(promise, with: failure, at: file, line))
  }
}

@MainActor
extension MainActorPromise {
  // MARK: Observing

  /// Registers `observer` to receive the result on the main actor, exactly once.
  ///
  /// ```swift
  /// store.band(id).onMainActor.await { result in self.band = try? result.get() }
  /// ```
  /// - Parameter observer: Receives the result on the main actor.
  @inlinable public func `await`(_ observer: @escaping @MainActor (Result<Success, Failure>) -> Void) {
    _observe(observer)
  }

  /// The outcome, if the promise has settled; `nil` while it is pending. Read on the main actor, for any
  /// `Success`.
  ///
  /// ```swift
  /// @MainActor func show(_ id: Band.ID) {
  ///     let band = store.band(id).onMainActor
  ///     if case .success(let loaded)? = band.settledResult { title = loaded.name }   // no flicker
  ///     else { band.await { result in self.title = (try? result.get().name) ?? "Unavailable" } }
  /// }
  /// ```
  ///
  /// As ``ResultPromise/settledResult``: exact as soon as `fulfil` has returned, even while a hop to the
  /// main actor that delivers the same outcome to the view's closures is still waiting.
  @inlinable public var settledResult: Result<Success, Failure>? {
    promise._hear(if: promise._outcome != nil)
  }

  /// Runs `body` with the value on the main actor if the promise succeeds.
  ///
  /// ```swift
  /// store.band(id).onMainActor.onSuccess { band in self.title = band.name }
  /// ```
  ///
  /// As ``ResultPromise/onSuccess(_:)``, it does not hear a failure: pair it with ``onFailure(_:)``.
  /// - Parameter body: Called with the success value, at most once.
  /// - Returns: This view, so that more observers can be chained.
  @inlinable @discardableResult public func onSuccess(_ body: @escaping @MainActor (Success) -> Void) -> Self
  {
    _observe(hearing: false) { if case .success(let value) = $0 { body(value) } }
    return self
  }

  /// Runs `body` with the error on the main actor if the promise fails.
  ///
  /// ```swift
  /// store.band(id).onMainActor.onFailure { error in self.alert = error.localizedDescription }
  /// ```
  /// - Parameter body: Called with the failure, at most once.
  /// - Returns: This view, so that more observers can be chained.
  @inlinable @discardableResult public func onFailure(_ body: @escaping @MainActor (Failure) -> Void) -> Self
  {
    _observe { if case .failure(let error) = $0 { body(error) } }
    return self
  }

  /// Runs `body` on the main actor on either outcome, then passes the same result on.
  ///
  /// ```swift
  /// isLoading = true
  /// store.band(id).onMainActor
  ///     .always { _ in self.isLoading = false }
  ///     .onSuccess { band in self.show(band) }
  /// ```
  ///
  /// As on ``ResultPromise``, the returned promise is a dependent of this one for cancellation, whether
  /// or not anyone keeps it; ``await(_:)``, ``onSuccess(_:)`` and ``onFailure(_:)`` are not.
  /// - Parameters:
  ///   - body: Called with the result, exactly once.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise that settles like this one, after `body` has run.
  @inlinable @discardableResult public func always(
    file: StaticString = #fileID, line: UInt = #line,
    _ body: @escaping @MainActor (Result<Success, Failure>) -> Void
  ) -> MainActorPromise<Success, Failure> {
    _chain(body, startsHeard: true, at: file, line) { body, result, next in
      body(result)
      next.fulfil(with: result)
    }
  }

  /// Runs `cleanup` on the main actor on either outcome, waits for the promise it returns, then passes the
  /// same result on. As ``ResultPromise/alwaysAsync(file:line:_:)``.
  ///
  /// ```swift
  /// editor.save(draft).onMainActor
  ///     .alwaysAsync { _ in self.document.close() }   // ResultPromise<Void, Never>
  ///     .await { result in self.show(result) }         // after the document is closed
  /// ```
  ///
  /// A request reaches this promise while it is pending, and never the cleanup, which runs to its end.
  /// - Parameters:
  ///   - cleanup: Called with the result, exactly once; the promise it returns is waited for.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise that settles like this one, after the cleanup has.
  @inlinable @discardableResult public func alwaysAsync(
    file: StaticString = #fileID, line: UInt = #line,
    _ cleanup: @escaping @MainActor (Result<Success, Failure>) -> ResultPromise<Void, Never>
  ) -> MainActorPromise<Success, Failure> {
    // As on `ResultPromise`: shielded, the step waits for the cleanup as a plain observer.
    _chain(cleanup, startsHeard: true, at: file, line) { cleanup, result, next in
      cleanup(result)._await { _ in next.fulfil(with: result) }
    }
  }

  // MARK: Chaining

  /// Continues on the main actor with a synchronous step that may fail.
  ///
  /// ```swift
  /// bootstrap().onMainActor.then { _ in context.fetchBand(id) }   // Result<Band, StoreError>
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value; its `Result` settles the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the step's result.
  @inlinable public func then<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Success) -> Result<NewSuccess, Failure>
  ) -> MainActorPromise<NewSuccess, Failure> {
    _chain(transform, at: file, line) { $2.fulfil(with: $1.flatMap($0)) }
  }

  /// Continues on the main actor with a step that returns another promise, and adopts its outcome.
  ///
  /// ```swift
  /// fetched.thenAsync { band in
  ///     band.otherNames.append(alias)
  ///     return api.update(band)   // ResultPromise<Band, StoreError>
  /// }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value; the promise it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise that settles like the one `transform` returns (or with this failure).
  @inlinable public func thenAsync<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Success) -> ResultPromise<NewSuccess, Failure>
  ) -> MainActorPromise<NewSuccess, Failure> {
    _chain(transform, adopts: true, at: file, line) { $2._adopt($1, then: $0) }
  }

  /// Continues on the main actor with a step that returns another main-actor view, and adopts its
  /// outcome: the same as the other `thenAsync`, for a closure whose nested chain stays on the main actor.
  ///
  /// ```swift
  /// fetched.thenAsync { band in
  ///     api.update(band.snapshot).onMainActor.map { saved in band.apply(saved) }   // no `.promise`
  /// }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value; the view it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise that settles like the one `transform` returns (or with this failure).
  @inlinable public func thenAsync<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Success) -> MainActorPromise<NewSuccess, Failure>
  ) -> MainActorPromise<NewSuccess, Failure> {
    thenAsync(file: file, line: line) { transform($0).promise }
  }

  /// Transforms the success value on the main actor.
  ///
  /// ```swift
  /// store.band(id).onMainActor.map { band in band.name }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the transformed value.
  @inlinable public func map<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Success) -> NewSuccess
  ) -> MainActorPromise<NewSuccess, Failure> {
    _chain(transform, at: file, line) { $2.fulfil(with: $1.map($0)) }
  }

  // Disfavoured for the same reason as `ResultPromise.map(_:)`'s typed-throws overload: otherwise a
  // non-throwing closure makes Swift infer `Failure == Never`.
  /// Transforms the success value on the main actor with a step that may throw `Failure`.
  ///
  /// ```swift
  /// store.band(id).onMainActor.map { (band) throws(StoreError) -> URL in
  ///     guard let url = band.website else { throw .missing }
  ///     return url
  /// }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the success value; a thrown error fails the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the transformed value or the thrown error.
  @inlinable @_disfavoredOverload public func map<NewSuccess>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Success) throws(Failure) -> NewSuccess
  ) -> MainActorPromise<NewSuccess, Failure> {
    then(file: file, line: line) { value in Result { () throws(Failure) in try transform(value) } }
  }

  /// Passes the value on if `isValid` says yes on the main actor; otherwise fails with `failure`. As
  /// ``ResultPromise/validate(else:file:line:_:)``.
  ///
  /// ```swift
  /// store.band(id).onMainActor
  ///     .validate(else: .hidden) { band in !self.blocked.contains(band.id) }
  ///     .onSuccess { band in self.show(band) }
  /// ```
  /// - Parameters:
  ///   - failure: The error to fail with when the check says no; evaluated only then, on the main actor.
  ///   - isValid: Called with the success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of this value, or of `failure`.
  @inlinable public func validate(
    else failure: @autoclosure @escaping @MainActor () -> Failure, file: StaticString = #fileID,
    line: UInt = #line,
    _ isValid: @escaping @MainActor (Success) -> Bool
  ) -> MainActorPromise<Success, Failure> {
    then(file: file, line: line) { isValid($0) ? .success($0) : .failure(failure()) }
  }

  /// Transforms the value on the main actor; a `nil` fails with `failure`. As
  /// ``ResultPromise/compactMap(else:file:line:_:)``.
  ///
  /// ```swift
  /// store.band(id).onMainActor
  ///     .compactMap(else: .noWebsite) { band in band.website }
  ///     .onSuccess { url in self.open(url) }
  /// ```
  /// - Parameters:
  ///   - failure: The error to fail with when `transform` returns `nil`; evaluated only then, on the main
  ///     actor.
  ///   - transform: Called with the success value.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the transformed value, or of `failure`.
  @inlinable public func compactMap<NewSuccess>(
    else failure: @autoclosure @escaping @MainActor () -> Failure, file: StaticString = #fileID,
    line: UInt = #line,
    _ transform: @escaping @MainActor (Success) -> NewSuccess?
  ) -> MainActorPromise<NewSuccess, Failure> {
    then(file: file, line: line) { transform($0).map(Result.success) ?? .failure(failure()) }
  }

  /// This view, typed to join a chain that can fail with `NewFailure`: the promise cannot fail, so it never
  /// does. As ``ResultPromise/setFailureType(to:file:line:)``.
  ///
  /// ```swift
  /// cache.thumbnail(id).onMainActor          // MainActorPromise<Image, Never>
  ///     .setFailureType(to: LoadError.self)
  ///     .thenAsync { image in uploader.upload(image) }
  /// ```
  /// - Parameters:
  ///   - failureType: The failure type of the returned view.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise with this promise's value and the failure type `NewFailure`.
  @inlinable public func setFailureType<NewFailure>(
    to failureType: NewFailure.Type, file: StaticString = #fileID, line: UInt = #line
  ) -> MainActorPromise<Success, NewFailure> where Failure == Never {
    MainActorPromise<Success, NewFailure>(
      promise._chain((), at: file, line) { _, result, next in next.fulfil(with: .success(result.get())) })
  }

  /// Transforms the failure on the main actor.
  ///
  /// ```swift
  /// store.band(id).onMainActor.mapError { _ in AppError.offline }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise with the same success value or the transformed failure.
  @inlinable public func mapError<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Failure) -> NewFailure
  ) -> MainActorPromise<Success, NewFailure> {
    _chain(transform, at: file, line) { $2.fulfil(with: $1.mapError($0)) }
  }

  // MARK: Recovering

  /// Handles a failure on the main actor, maybe turning it into a success.
  ///
  /// ```swift
  /// remote.band(id).onMainActor.recover { _ in context.cachedBand(id) }   // Result<Band, AppError>
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; its `Result` settles the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the success value or the recovery's result.
  @inlinable public func recover<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Failure) -> Result<Success, NewFailure>
  ) -> MainActorPromise<Success, NewFailure> {
    _chain(transform, at: file, line) { $2.fulfil(with: $1.flatMapError($0)) }
  }

  /// Handles a failure on the main actor, keeping the error type.
  ///
  /// ```swift
  /// remote.band(id).onMainActor.recover { error in
  ///     self.log(error)
  ///     return .success(Band.placeholder(in: context))
  /// }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; its `Result` settles the returned promise.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the success value or the recovery's result.
  @inlinable public func recover(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Failure) -> Result<Success, Failure>
  ) -> MainActorPromise<Success, Failure> {
    _chain(transform, at: file, line) { $2.fulfil(with: $1.flatMapError($0)) }
  }

  /// Handles a failure on the main actor with a step that returns another promise.
  ///
  /// ```swift
  /// context.band(id).onMainActor.recoverAsync { _ in remote.band(id) }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; the promise it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the success value or the outcome of the promise `transform`
  ///   returns.
  @inlinable public func recoverAsync<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Failure) -> ResultPromise<Success, NewFailure>
  ) -> MainActorPromise<Success, NewFailure> {
    _chain(transform, adopts: true, at: file, line) { $2._adopt($1, recovering: $0) }
  }

  /// Handles a failure on the main actor with a step that returns another promise, keeping the error
  /// type.
  ///
  /// ```swift
  /// context.band(id).onMainActor.recoverAsync { error in
  ///     self.log(error)
  ///     return ResultPromise(value: Band.placeholder(in: context))
  /// }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; the promise it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the success value or the outcome of the promise `transform`
  ///   returns.
  @inlinable public func recoverAsync(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Failure) -> ResultPromise<Success, Failure>
  ) -> MainActorPromise<Success, Failure> {
    _chain(transform, adopts: true, at: file, line) { $2._adopt($1, recovering: $0) }
  }

  /// Handles a failure on the main actor with a step that returns another main-actor view.
  ///
  /// ```swift
  /// context.band(id).onMainActor.recoverAsync { _ in remote.band(id).onMainActor.map { $0.cached() } }
  /// ```
  /// - Parameters:
  ///   - transform: Called with the failure; the view it returns settles the result.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A view of a promise of the success value or the outcome of the view `transform` returns.
  @inlinable public func recoverAsync<NewFailure>(
    file: StaticString = #fileID, line: UInt = #line,
    _ transform: @escaping @MainActor (Failure) -> MainActorPromise<Success, NewFailure>
  ) -> MainActorPromise<Success, NewFailure> {
    recoverAsync(file: file, line: line) { transform($0).promise }
  }

  // MARK: Swift Concurrency

  /// The result, awaited on the main actor.
  ///
  /// ```swift
  /// switch await store.band(id).onMainActor.result {
  /// case .success(let band): show(band)
  /// case .failure(let error): show(error)
  /// }
  /// ```
  ///
  /// A cancelled awaiting task lets the promise go, as ``ResultPromise/result`` does (the work of a
  /// promise nothing else wants is asked to stop), and resumes when the promise settles. To stop waiting
  /// at once when the task is cancelled, use ``resultAbandoningOnCancel()``.
  @inlinable public var result: Result<Success, Failure> {
    get async { await promise._result(afterHops: true) }
  }

  /// The success value, awaited on the main actor; throws the failure.
  ///
  /// ```swift
  /// let band = try await store.band(id).onMainActor.value
  /// ```
  ///
  /// A cancelled awaiting task lets the promise go, and resumes when the promise settles.
  @inlinable public var value: Success {
    get async throws(Failure) { try await result.get() }
  }

  // MARK: Internals

  /// Runs `observer` on the main actor with the result (see `_MainActorStep.run`).
  @inlinable func _observe(
    hearing hears: Bool = true, _ observer: @escaping @MainActor (Result<Success, Failure>) -> Void
  ) {
    // `unowned(unsafe)`: an observer that held its own promise would keep a pending one alive forever
    // (never reported as broken). The core runs an observer only while its promise is alive.
    promise._await(hearing: hears) { [unowned(unsafe) promise] result in
      _MainActorStep(input: promise, transform: observer) { observer, result, _ in observer(result) }
        .run(result, ())
    }
  }

  /// Chains a step: `apply(transform, result, next)` gets the result and the next promise, and settles it,
  /// on the main actor. A step of the core's chain holds it (see `_MainActorStep`): one allocation per step
  /// that waits. A step that `adopts` another promise (`thenAsync`, `recoverAsync`) can always be
  /// cancelled, where the cancellation file is present, so that a request reaches the promise it adopts.
  /// The next promise of a step whose closure hears the failure and need not hand it on (`always`)
  /// `startsHeard`.
  @inlinable func _chain<Transform, NewSuccess, NewFailure>(
    _ transform: Transform, adopts: Bool = false, startsHeard: Bool = false, at file: StaticString,
    _ line: UInt,
    _ apply:
      @escaping _MainActorStep<Transform, Success, Failure, ResultPromise<NewSuccess, NewFailure>>.Apply
  ) -> MainActorPromise<NewSuccess, NewFailure> {
    let held = _MainActorStep(input: promise, transform: transform, apply: apply)
    let next = promise._chain(held, adopts: adopts, startsHeard: startsHeard, at: file, line) {
      $0.run($1, $2)
    }
    return next.onMainActor
  }
}

/// What the view runs on the main actor for an observer of `input`: `apply(transform, result, next)`, where
/// `apply` is a closure literal that captures nothing, so that holding it allocates nothing. A step of the
/// view is held so in the core's step object, as any step's transform is: one allocation per step.
@usableFromInline nonisolated struct _MainActorStep<Transform, Success, Failure: Error, Next> {
  @usableFromInline typealias Apply = @MainActor (Transform, Result<Success, Failure>, Next) -> Void
  /// `unowned(unsafe)`, as `_observe`'s capture: the core runs an observer only while its promise is alive.
  @usableFromInline unowned(unsafe) let input: ResultPromise<Success, Failure>
  @usableFromInline let transform: Transform
  @usableFromInline let apply: Apply

  @inlinable init(input: ResultPromise<Success, Failure>, transform: Transform, apply: @escaping Apply) {
    (self.input, self.transform, self.apply) = (input, transform, apply)
  }
}

extension _MainActorStep {
  /// Calls `apply` on the main actor: at once if an observer of `input` may run now (on the main actor, with
  /// no hop of it waiting), otherwise by a hop. Called where `input` delivers, on any thread; `@MainActor`
  /// so that it may call `apply` at once, which it does only when `runsNow` has found the main actor.
  @inlinable @MainActor func run(_ result: Result<Success, Failure>, _ next: Next) {
    if _MainQueue.runsNow(for: input) {
      apply(transform, result, next)
    } else {
      _MainQueue.hop(_MainActorJob(input) { apply(transform, result, next) })
    }
  }
}

// MARK: - Descriptions

// The description reads the value only on the main actor, where the library hands a value that need not be
// `Sendable` to user code; elsewhere it says `success` without it. (A conformance cannot depend on
// `Success: Sendable`, so the compiler cannot choose by that.)
nonisolated extension ResultPromise: CustomDebugStringConvertible {
  /// The type and the state: `ResultPromise<Int, LoadError>(pending)`, `…(failure(LoadError.offline))`,
  /// or `…(success(42))` — with the value only when read on the main actor, and `…(success)` elsewhere.
  ///
  /// ```swift
  /// print(String(reflecting: promise))   // ResultPromise<Int, LoadError>(pending); `po promise` in LLDB
  /// ```
  ///
  /// Reads the state now, from any thread; ``settledResult`` has the value on any thread when it is
  /// `Sendable`.
  public var debugDescription: String { "\(ResultPromise<Success, Failure>.self)(\(_debugState))" }

  /// `pending`, or the outcome: the value only on the main actor, the one place it may be read for any type.
  var _debugState: String {
    switch _withLock({ _outcome }) {
    case nil: "pending"
    case .success(let value) where DispatchQueue.getSpecific(key: _MainQueue.key) == true:
      "success(\(String(reflecting: value)))"
    case .success: "success"
    case .failure(let error): "failure(\(String(reflecting: error)))"
    }
  }
}

nonisolated extension MainActorPromise: CustomDebugStringConvertible {
  /// The type and the state, as ``ResultPromise/debugDescription``: `MainActorPromise<Band, StoreError>(pending)`.
  ///
  /// ```swift
  /// print(String(reflecting: store.band(id).onMainActor))   // MainActorPromise<Band, StoreError>(pending)
  /// ```
  public var debugDescription: String { "\(Self.self)(\(promise._debugState))" }
}

nonisolated extension MainActorPromise where Failure == Never {
  /// The success value, awaited on the main actor; no `try`, since the promise cannot fail.
  ///
  /// ```swift
  /// let count = await counter.onMainActor.value
  /// ```
  @MainActor public var value: Success {
    get async { await result.get() }
  }
}

nonisolated extension ResultPromise {
  /// The result, awaited by a task on `isolation`, with one observer: the promise's delivery resumes the task
  /// on the thread that settles it, as a continuation resumed there would be (the task then runs on its own
  /// executor), in its place among the observers (see `_MainQueue.resume` for a main-actor task awaiting the
  /// view: `afterHops`). The task is a dependent of the promise: cancelled, it lets the promise go (if
  /// nothing else wants it, a request reaches its work), and goes on waiting.
  @inlinable func _result(
    afterHops: Bool = false, isolation: isolated (any Actor)? = #isolation
  ) async -> Result<Success, Failure> {
    if let now = _delivered(afterHops: afterHops) { return now }
    let waiter = _extras?.dependent(on: nil, at: _depth)
    return await withTaskCancellationHandler(
      operation: {
        await withUnsafeContinuation(isolation: isolation) { continuation in
          self._await { [unowned(unsafe) self] result in
            _MainQueue.resume(continuation, with: _TaskResult(result), for: self, afterHops: afterHops)
          }
        }
      }, onCancel: { waiter?.settled(at: 0) }, isolation: isolation
    ).result
  }

  /// The outcome, if a task awaiting it now may have it without waiting: the promise has delivered it to
  /// every observer and (`afterHops`, for a main-actor task awaiting the view) no hop of it waits on the
  /// main queue — the hops its delivery sends are all sent once it has ended.
  @inlinable func _delivered(afterHops: Bool) -> Result<Success, Failure>? {
    guard let now = _hear(if: _phase == .settled) else { return nil }
    return afterHops && _MainQueue.hopIsWaiting(for: self) ? nil : now
  }
}

nonisolated extension _Extras {
  // A trick of overload ranking, as the core's `forStep`: the cancellation file declares a `requestCancel`
  // for `ResultPromise` that Swift prefers to this generic one wherever both are in the module. Without
  // that file no promise can be cancelled, so this one has nothing to do.
  /// Does nothing: without the cancellation file no promise can be cancelled.
  static func requestCancel<Promise>(_ promise: Promise) {}

  /// `promise` itself: without the cancellation file no request can come.
  static func abandoning<Promise, Failure>(
    _ promise: Promise, with failure: @escaping @Sendable () -> Failure, at file: StaticString, _ line: UInt
  ) -> Promise {
    promise
  }
}

// MARK: - Hops to the main queue (internal)

/// Work to run on the main actor, carried to the main queue.
///
/// `@unchecked Sendable`: it is created where a promise delivers, handed to the main queue, and run there
/// at most once; the closure it carries is `@MainActor`,
/// so it only ever runs on the main actor.
/// The result it captures may be non-`Sendable`: then every other closure that sees it also runs on
/// the main actor, since the plain operations that hand out the value require `Sendable`.
@usableFromInline final nonisolated class _MainActorJob: @unchecked Sendable {
  /// The promise whose observer this is; retained until the job has run, so its identifier is not reused.
  @usableFromInline let promise: AnyObject
  @usableFromInline let run: @MainActor () -> Void
  @usableFromInline init(_ promise: AnyObject, _ run: @escaping @MainActor () -> Void) {
    (self.promise, self.run) = (promise, run)
  }
}

/// A result carried to the task awaiting it, which may run on another thread. `@unchecked Sendable` as
/// `_MainActorJob` is: a value that is not `Sendable` is only ever awaited by a main-actor task (through the
/// view), and the other closures that could see it run on the main actor too.
@usableFromInline nonisolated struct _TaskResult<Success, Failure: Error>: @unchecked Sendable {
  @usableFromInline let result: Result<Success, Failure>
  @inlinable init(_ result: Result<Success, Failure>) { self.result = result }
}

/// Whether code is on the main queue, and the hops to it that are still waiting, per promise.
@usableFromInline nonisolated enum _MainQueue {
  /// Marks the main queue, so that `DispatchQueue.getSpecific` tells whether code runs on it.
  static let key: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
  }()

  /// The number of hops still waiting on the main queue, by promise.
  static let waiting = _WaitingHops()

  /// Whether an observer of `promise` may run now: on the main actor, with no hop of it waiting.
  @usableFromInline static func runsNow(for promise: AnyObject) -> Bool {
    DispatchQueue.getSpecific(key: key) == true && waiting.count(for: promise) == 0
  }

  /// Runs `job` on the main actor, after every hop of its promise that is already waiting.
  @usableFromInline static func hop(_ job: _MainActorJob) {
    waiting.send(job)
  }

  /// Resumes a task awaiting `promise` with `value`, from where the promise delivers. A main-actor task
  /// awaiting the view (`afterHops`) must not overtake the view's earlier closures: resumed on the main
  /// queue while a hop of the promise waits there, it is resumed by a hop behind it. (Resumed elsewhere, it
  /// is queued on the main queue behind the hops its promise's delivery has sent already.)
  @inlinable static func resume<Value: Sendable>(
    _ continuation: UnsafeContinuation<Value, Never>, with value: Value, for promise: AnyObject,
    afterHops: Bool
  ) {
    guard afterHops, hopIsWaiting(for: promise) else { return continuation.resume(returning: value) }
    hop(_MainActorJob(promise) { continuation.resume(returning: value) })
  }

  /// Whether this is the main queue, and a hop of `promise` waits on it.
  @usableFromInline static func hopIsWaiting(for promise: AnyObject) -> Bool {
    DispatchQueue.getSpecific(key: key) == true && waiting.count(for: promise) > 0
  }

}

/// The hops waiting on the main queue, counted per promise.
///
/// A hop is counted and sent to the main queue in one step, under the lock, and stops counting only
/// when its closure runs. So a closure added on the main actor while a hop of its promise waits sees
/// it, and hops too: the main queue runs blocks first in, first out, so it runs after the earlier one.
/// On the main queue a hop runs through the thread's queue of work like any delivery — behind the
/// callback that is running, if the main queue is run from inside one (a nested run loop).
final nonisolated class _WaitingHops: @unchecked Sendable {
  // @unchecked Sendable: `counts` is only read and written while the lock is held.
  private var counts: [ObjectIdentifier: Int] = [:]

  func count(for promise: AnyObject) -> Int {
    _Lock(for: self).withLock { counts[ObjectIdentifier(promise)] ?? 0 }
  }

  func send(_ job: _MainActorJob) {
    _Lock(for: self).withLock {
      counts[ObjectIdentifier(job.promise), default: 0] += 1
      DispatchQueue.main.async {
        let hop = _Job(job) { target in
          let job = unsafeDowncast(target, to: _MainActorJob.self)
          _MainQueue.waiting.ran(job)
          MainActor.assumeIsolated { job.run() }
        }
        _Trampoline.withCurrent { $0.run(hop) }
      }
    }
  }

  private func ran(_ job: _MainActorJob) {
    _Lock(for: self).withLock {
      let id = ObjectIdentifier(job.promise)
      let count = counts[id, default: 1] - 1
      counts[id] = count == 0 ? nil : count
    }
  }
}
