// Cancellation: asking the work behind a promise to stop.
//
// A request, never an outcome. `cancel()` never settles a promise: it reaches the work — a handler that
// `ResultPromise { done, onCancel in … }` registered, a timer, a `Task` — and the work reports how it ended,
// in its own typed `Failure`, through its promise like any outcome. So every observer still runs exactly
// once, and a typed error never has to make room for a `CancellationError`.
//
// Records. A promise that can be cancelled carries a record (`_Cancellation`, in the core's `_extras`
// field); every other promise carries none, and the core's three calls into it cost a `nil` check. A
// record knows the record of what its promise waits for now (`upstream`: a step's input, the promise a
// `thenAsync` step adopted, `retry`'s attempt or wait), or of several (a combinator's inputs), the
// handlers of its work, and how many *dependents* still want its outcome (`interest`): records of the
// promises made from it and of the tasks awaiting it. Inputs and handlers, which a step's record never
// has, are made only when the first comes (`rest`). Records point only up, to records — never to a
// promise — so they form no cycle with a chain; a record's `deinit` releases what it waits for in a loop,
// so a long chain or a tall tower of combinators of them is freed at constant stack depth.
//
// Chains share. A record belongs to its *first* promise, and is shared by the steps made one after the
// other from it — `map`, `then`, `always`… made from the last step so far (the `tip`) — so a cancellable
// chain costs one allocation per step, as a plain one does. Each promise stores its depth in the stretch
// (the core's `_depth`: 0 for the first). Such a step has nothing of its own to stop, so only what its
// dependents want matters: in a stretch where every step has one dependent, the next step, a request on
// any of them, or one settling out of order, lets every step before it go, down to the first promise. A
// step that gets a second dependent (a fork, an awaiting task, `ignoringCancel()`; all with records of
// their own, counted at that depth) gets a *branch*, which counts them and notes when its next step has
// let it go; a request travelling down stops at a branch still wanted. A step that has let go may let go
// again (a request on a step already cancelled or settled): the branch below it, or the first promise,
// already knows, so nothing changes twice. A promise with a queue, and every promise made from a step
// that is not the tip, start records of their own.
//
// Steps that adopt. A `thenAsync` or `recoverAsync` step shares the record too, but it has work of its own
// to stop once it adopts another promise. The record keeps the set of such steps still *waiting* (neither
// settled nor reached by a request) and, for each that has adopted a cancellable promise, that promise's
// place (held weakly: see `Adopted`). A request that reaches a waiting step lets go of what it adopted, or,
// if it has not adopted yet, takes it out of the set, so that what it adopts later is let go at once;
// settling takes it out too. So a record is *live* — requests still travel through it — while its first
// promise is open or a step that adopts is waiting: a chain of `thenAsync` steps costs one allocation per
// step, as a `map` chain does.
//
// Which promises have one. A promise made with `onCancel`, by a timer or a `Task`, or by an operator from
// a promise that has one; and every promise a `thenAsync` or `recoverAsync` step makes, whatever its
// input, because the promise it will adopt may be cancellable: so a request from the end of a chain
// reaches the work it adopted, whatever its first promise was (a value, a plain `ResultPromise { done in
// … }`, the result of `ignoringCancel()`). The core asks for a step's record through `_Extras.forStep`;
// this file's overload of it is the one that shares records, and gives adopting steps one.
//
// A request. `cancel()` cancels the first promise it reaches (see above), runs its handlers, and
// *withdraws* from what it waits for: the record above loses one dependent, and is cancelled in turn when that was its last (a shared
// promise stops only when nobody wants it any more). A settled promise withdraws too, which is how `race`
// lets its losers go. The request travels up in a loop, not by recursion; handlers run on the requesting
// thread through its queue of work, never under a lock; no lock is held while another is taken.
//
// This file needs only the core file, `ResultPromise.swift`, beside it. `MainActorPromise.cancel()` lives
// in the main-actor file, and reaches `cancel()` through `_Extras.requestCancel`, below.

import Dispatch

#if !canImport(Darwin)
  import Synchronization
#endif

nonisolated extension ResultPromise where Success: Sendable {
  /// Creates a pending promise whose work can be stopped: `start` gets its `fulfil` function and an
  /// `onCancel` function to register what stops the work.
  ///
  /// ```swift
  /// func data(from url: URL) -> ResultPromise<Data, APIError> {
  ///     ResultPromise { done, onCancel in
  ///         let task = URLSession.shared.dataTask(with: url) { data, _, error in
  ///             if let data { return done(.success(data)) }
  ///             done(.failure((error as? URLError)?.code == .cancelled ? .cancelled : .offline))
  ///         }
  ///         onCancel { [weak task] in task?.cancel() }   // the task then reports URLError.cancelled
  ///         task.resume()
  ///     }
  /// }
  /// ```
  ///
  /// Everything about `start` and `fulfil` is as for ``init(_:file:line:)``. A handler given to `onCancel`
  /// runs at most once: when ``cancel()`` is called on this promise, or on a promise made from it when
  /// nothing else wants this one (see ``cancel()``), and only if that request comes before the promise
  /// settles — at once if it came before the handler was registered. A request that comes after the
  /// promise has settled runs nothing; settling releases the handlers unrun, with what they capture. The
  /// two can race: a handler the request started may still be running, or just starting, while or just
  /// after the work settles the promise, so the work must be ready for both (a URLSession task cancelled
  /// after it finished does nothing). A handler runs on the thread that asks for the cancellation, never
  /// under a lock. It asks; the work still settles the promise, with a failure or whatever it came to.
  ///
  /// The promise keeps its handlers, with what they capture, until the request or the settlement. So a
  /// handler that captures `fulfil` (`onCancel { done(.failure(.cancelled)) }`) keeps the promise alive
  /// until one of them comes: if the work is dropped without calling back, that promise is neither freed
  /// nor reported as broken. Let the handler reach the work, as above, rather than `fulfil`.
  /// - Parameters:
  ///   - start: Starts the work, registers its handlers with `onCancel`, and arranges for `fulfil` to be
  ///     called with its outcome.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (
      _ fulfil: @escaping @Sendable (Result<Success, Failure>) -> Void,
      _ onCancel: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) -> Void
    ) -> Void,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    let record = _Cancellation()
    self.init(_userMade: record, file: file, line: line)
    start({ [resolver = _Resolver(self)] in resolver.promise.fulfil(with: $0) }, { record.onCancel($0) })
  }
}

nonisolated extension ResultPromise {
  /// Creates a pending promise whose work can be stopped, for a non-`Sendable` `Success`: `fulfil`
  /// takes the result as `sending`.
  ///
  /// ```swift
  /// // `Document` is a class that is not `Sendable`.
  /// let document = ResultPromise<Document, ParseError> { done, onCancel in
  ///     let job = parser.start(data) { done($0) }
  ///     onCancel { job.stop() }   // the parser then reports .stopped
  /// }
  /// ```
  ///
  /// As the `Sendable` form above: `onCancel`'s handlers run at most once, on the requesting thread, only
  /// for a request that comes before the promise settles (and possibly while the work settles it); a
  /// handler that captures `fulfil` keeps the promise alive until one of them comes.
  /// - Parameters:
  ///   - start: Starts the work, registers its handlers with `onCancel`, and arranges for `fulfil` to be
  ///     called with its outcome.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (
      _ fulfil: @escaping @Sendable (sending Result<Success, Failure>) -> Void,
      _ onCancel: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) -> Void
    ) -> Void,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    let record = _Cancellation()
    self.init(_userMade: record, file: file, line: line)
    start({ [resolver = _Resolver(self)] in resolver.promise.fulfil(with: $0) }, { record.onCancel($0) })
  }

  /// Asks the work behind this promise to stop. A request: it never settles the promise by itself.
  ///
  /// ```swift
  /// let avatar = data(from: profileURL)
  ///     .then { json in decode(Profile.self, from: json) }
  ///     .thenAsync { profile in data(from: profile.avatarURL) }
  /// avatar.cancel()   // reaches the profile request, or the avatar request if that one is running
  /// avatar.onFailure { error in … }   // .cancelled, as the request reported it
  /// ```
  ///
  /// The request travels from this promise to the work that runs now: a step's input, the promise a
  /// `thenAsync` or `recoverAsync` step adopts (also one it adopts later), a combinator's inputs, a timer,
  /// the `Task` of ``init(priority:file:line:operation:)``, and the handlers registered with `onCancel`. On the way
  /// it stops at any promise that something else still wants: a promise that another chain was made from,
  /// or that a task is awaiting, stops only once every such dependent has let it go (by being cancelled,
  /// by settling, or by its task being cancelled). `cancel()` on a promise itself cancels it whatever its
  /// dependents want. Plain observers (`await`, `onSuccess`, `onFailure`) are not dependents.
  ///
  /// The work reports how it ended, in its own `Failure`, and that outcome reaches this promise and its
  /// observers as any outcome does; work that ignores the request settles as it would have.
  ///
  /// Which promises can be cancelled: one made with `ResultPromise { done, onCancel in … }` (also the
  /// completion-handler forms with `onCancel`), by a timer (`delay`, `after`, `retry`), by
  /// `init(priority:operation:)` or by `all(_:concurrently:)`; every promise a `thenAsync` or
  /// `recoverAsync` step makes, whatever came before it; and every promise an operator makes from one
  /// that can. So a chain reaches the work it adopts whatever its first promise is — a value, a plain
  /// `ResultPromise { done in … }`, a shared promise's `ignoringCancel()`:
  ///
  /// ```swift
  /// let avatar = ResultPromise(value: cachedProfile)            // a value: nothing to stop
  ///     .thenAsync { profile in data(from: profile.avatarURL) }  // a request reaches this
  /// avatar.cancel()
  /// ```
  ///
  /// On any other promise this does nothing — and in debug builds says so once, through
  /// ``PromiseDiagnostics/brokenPromiseHandler``, naming where the promise was made when it was made by
  /// `ResultPromise()` or `ResultPromise { done in … }`.
  ///
  /// Thread-safe, idempotent, and a no-op once the promise has settled. Handlers run on the calling
  /// thread (after the callback that is running, if called from inside one), never under a lock. A promise
  /// asked to cancel while pending is not reported if nothing hears its failure (it answers the request;
  /// see ``PromiseDiagnostics/unheardFailureHandler``).
  public func cancel() {
    // A failure that answers the request is not reported as unheard. (The phase, not `_outcome`: this method
    // is not specialised, and reading a generic value here costs a metadata lookup.)
    _withLock { if _phase == .pending || _phase == .claimed { _flags.insert(.heard) } }
    if let record = _extras as? _Cancellation { return record.cancel(at: _depth) }
    #if DEBUG
      guard _withLock({ _flags.insert(.toldCannotCancel).inserted }) else { return }
      let problem = "cannot be cancelled, so cancel() does nothing"
      let made = _origin?.chain != nil ? " (it was made by an operator from a promise that cannot be)" : ""
      let remedy = "make it with ResultPromise { done, onCancel in … }, a thenAsync step, a timer or a Task"
      PromiseDiagnostics._report(self) { "\(problem)\(made); to stop its work, \(remedy)." }
    #endif
  }

  /// A promise that settles like this one and never passes a request to cancel on to it.
  ///
  /// ```swift
  /// // One load for every caller; one caller going away must not stop it for the others.
  /// func profile(_ id: User.ID) -> ResultPromise<Profile, APIError> {
  ///     if let loading = cache[id] { return loading }
  ///     let loading = api.profile(id).ignoringCancel()
  ///     cache[id] = loading
  ///     return loading
  /// }
  /// ```
  ///
  /// This promise keeps a dependent for good, so a request that reaches it from elsewhere stops it only
  /// if made on it directly. The returned promise cannot be cancelled, but a chain made from it still
  /// reaches the work its `thenAsync` steps adopt: `profile(id).thenAsync { avatar($0) }` stops the
  /// avatar request on a request, and leaves the shared profile load running.
  /// - Parameters:
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise with this promise's outcome.
  public func ignoringCancel(
    file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise(_pending: nil)._made(at: file, line, from: self)
    _ = (_extras as? _Cancellation)?.count(at: _depth)  // a dependent that never lets go
    _await { next.fulfil(with: $0) }
    return next
  }

  /// A promise for a caller who may leave: it settles like this one, or — when a request reaches it
  /// first — fails at once with `failure`, and lets this promise go.
  ///
  /// ```swift
  /// // One sign-in, shared by every screen that waits for it; each screen can leave on its own.
  /// let signedIn = session.abandoningOnCancel(with: .cancelled)
  /// signedIn.onFailure { error in … }   // .cancelled, at once
  /// signedIn.cancel()   // the sign-in goes on for the other callers; when the last
  ///                     // has left, it is asked to stop
  /// ```
  ///
  /// For work shared by key — one download per URL — take `SharedWork`, which gives each caller such a
  /// promise, and forgets the work once it ends or its last caller leaves.
  ///
  /// A request (see ``cancel()``) that reaches the returned promise before it settles fails it with
  /// `failure`, at once, on the requesting thread (after the callback that is running, if made from
  /// inside one), and the returned promise withdraws from this one as a settled dependent does: this
  /// promise is asked to stop only if nothing else wants it. Its observers run once, with that failure; a
  /// result that this promise brings later is dropped. So the steps after it see an ordinary failure: a
  /// `thenAsync` after it whose input had not settled never starts its work. If this promise settles
  /// first, the returned one settles like it, and a later request changes nothing — also while this
  /// promise's delivery is still running an earlier observer on another thread. A request and this
  /// promise's settlement that race decide once; `failure` is evaluated only when it is the outcome.
  ///
  /// Without it a request is never an outcome: a caller who cancels a shared promise's dependent hears
  /// nothing until the shared work ends, and then its result. However the returned promise is decided —
  /// by a request, or fulfilled by hand — it takes back what it registered on this promise at once, so a
  /// long-lived shared promise keeps nothing of the callers who left it.
  /// - Parameters:
  ///   - failure: What the caller who left hears; evaluated only if a request decides.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like this one, or fails with `failure` on a request.
  @inlinable public func abandoningOnCancel(
    with failure: @autoclosure @escaping @Sendable () -> Failure, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    _abandoning(failure, at: file, line)
  }

  /// `abandoningOnCancel`, and what a caller does once it has left (`leaving`). This promise's observer and
  /// the request handler race to settle `next`, which decides once. A request decides only while this promise
  /// is pending: once it has settled, its delivery brings its outcome, also while it still runs an earlier
  /// observer on another thread. The handler claims `next`, and only then evaluates `failure`; settling
  /// `next`, whoever does it, withdraws the observer before `next`'s own observers run — so by the time the
  /// caller hears it left, it has. The handler, which `next`'s record holds, reaches both promises weakly, so
  /// they make no cycle.
  @inlinable func _abandoning(
    _ failure: @escaping @Sendable () -> Failure, at file: StaticString, _ line: UInt,
    leaving: (@Sendable () -> Void)? = nil
  ) -> ResultPromise<Success, Failure> {
    let record = _extras?.dependent(on: nil, at: _depth) as? _Cancellation ?? _Cancellation()
    let next = ResultPromise<Success, Failure>(_pending: record)._made(at: file, line, from: self)
    let input = _Registration(self, at: _await { next.fulfil(with: $0) }, leaving: leaving)
    record.whenSettled(withdrawing: input)
    record.onCancel { [later = _Weak(next)] in
      guard input.isPending else { return }
      later.object?._fulfil(claiming: { .failure(failure()) })
    }
    return next
  }

  /// Creates a pending user-made promise (reported if dropped while pending) with `record`.
  @inlinable convenience init(_userMade record: _Cancellation, file: StaticString, line: UInt) {
    self.init(_pending: record)
    _flags.insert(.reportsBroken)  // set before the promise is shared, so without the lock
    _made(at: file, line)
  }
}

/// A weak reference that a `@Sendable` closure can hold, to a promise it may only settle or withdraw from.
///
/// `@unchecked Sendable`: `object` is set once, before the box is shared, and weak loads are atomic. (The
/// promise's value may not be `Sendable`; it is only settled with a failure through this box.)
@usableFromInline final nonisolated class _Weak<Object: AnyObject>: @unchecked Sendable {
  @usableFromInline weak var object: Object?
  @inlinable init(_ object: Object) { self.object = object }
}

/// An operator's observer on the promise it waits for, which it holds weakly (a dropped input must not be kept
/// alive): to tell whether that promise is still pending, and to take the observer back once decided.
///
/// `@unchecked Sendable`: `promise` and `place` are set once, before the registration is shared, and weak
/// loads are atomic; the promise is only read for its state and withdrawn from.
@usableFromInline final nonisolated class _Registration<Success, Failure: Error>: @unchecked Sendable {
  @usableFromInline weak var promise: ResultPromise<Success, Failure>?
  /// Where the observer went (see `_await`); `nil` if it ran at once.
  @usableFromInline let place: Int?
  /// What the operator does once it takes the observer back (a `SharedWork` caller leaves its run).
  @usableFromInline let leaving: (@Sendable () -> Void)?

  @inlinable init(
    _ promise: ResultPromise<Success, Failure>, at place: Int?, leaving: (@Sendable () -> Void)? = nil
  ) {
    (self.promise, self.place, self.leaving) = (promise, place, leaving)
  }

  /// Whether the promise is pending, or gone (dropped while pending, it will never settle).
  @inlinable var isPending: Bool { promise?.isPending != false }

  /// Takes the observer back, if it is still waiting. Once only: a place taken back may be given to the next.
  @inlinable func withdraw() {
    if let place { promise?._withdraw(place) }
    leaving?()
  }
}

// MARK: - Withdrawal (internal)
//
// A caller who stops waiting takes back the observer it registered, by the place the core's `_await`
// returned: while the promise is pending, the observer leaves the single-observer slot, or leaves a gap in
// `_more` (the others keep their places and order; gaps at the end go at once, the rest when the array is
// next full). A combinator notes the places it registered on its inputs in a `_Withdrawer`, and withdraws
// them once decided. Who settles a promise with a failure it must evaluate claims the promise first.

/// One that waits for several promises and may stop before they settle (a combinator that is decided): the
/// places of the observers it registered, withdrawn all at once when it stops — or at once, if it has
/// stopped already, which settles a race between its registering and its deciding. Each input is held
/// weakly: a strong hold would keep an abandoned pending input alive, never freed or reported.
///
/// `@unchecked Sendable`: `first`, `more` and `noted` are used only under the lock, except by `stop`, once
/// `watch` can no longer change them.
@usableFromInline nonisolated class _Withdrawer: @unchecked Sendable {
  @usableFromInline struct Place {
    @usableFromInline weak var promise: AnyObject?
    @usableFromInline let place: Int
    /// `promise._withdraw(place)`: a closure literal in `watch`, which the client specialises, so it has
    /// no generic context to capture and needs no allocation (a protocol witness would run unspecialised).
    @usableFromInline let withdraw: (AnyObject, Int) -> Void
    @inlinable init(_ promise: AnyObject, _ place: Int, _ withdraw: @escaping (AnyObject, Int) -> Void) {
      (self.promise, self.place, self.withdraw) = (promise, place, withdraw)
    }
    @inlinable func withdrawNow() { promise.map { withdraw($0, place) } }
  }
  /// The first place noted, kept without an array (often the only input still pending), then the others.
  @exclusivity(unchecked) @usableFromInline var first: Place?
  @exclusivity(unchecked) @usableFromInline var more: [Place] = []
  /// How many places were noted, or -1 once this has stopped.
  @exclusivity(unchecked) @usableFromInline var noted = 0
  @inlinable init() {}

  /// Notes the observer at `place` of `promise` (`nil`: it has run), to withdraw when this stops.
  @inlinable final func watch<Success, Failure>(_ promise: ResultPromise<Success, Failure>, at place: Int?) {
    guard let place else { return }
    let withdraw: (AnyObject, Int) -> Void = {
      unsafeDowncast($0, to: ResultPromise<Success, Failure>.self)._withdraw($1)
    }
    let now: Bool = _Lock(for: self).withLock {
      // Made where it is stored: a copy of a place copies a weak reference.
      switch noted {
      case -1: return true
      case 0: first = Place(promise, place, withdraw)
      default: more.append(Place(promise, place, withdraw))
      }
      noted += 1
      return false
    }
    if now { promise._withdraw(place) }
  }

  /// Stops waiting: withdraws every observer noted, and any noted later. Called once, by whoever decided.
  @inlinable final func stop() {
    let count: Int = _Lock(for: self).withLock {
      defer { noted = -1 }
      return noted
    }
    // `watch` notes nothing more, and this runs once: the places are this call's to read, in place.
    guard count > 0 else { return }
    first.take()?.withdrawNow()  // moved out: reading it in place copied it
    var index = 0
    while index < count - 1 {
      more[index].withdrawNow()
      index += 1
    }
  }
}

nonisolated extension ResultPromise {
  /// Settles with `outcome()` if the promise is pending, evaluating it only then: the promise is claimed
  /// first, so a `fulfil` racing this one finds it settled (decide first, then evaluate). Returns whether
  /// this call settled it.
  @inlinable @discardableResult final func _fulfil(claiming outcome: () -> Result<Success, Failure>) -> Bool {
    let claimed: Bool = _withLock {
      guard _phase == .pending else { return false }
      _phase = .claimed
      return true
    }
    return claimed && _settle(with: outcome(), from: .claimed)
  }

  /// Takes back the observer at `place` (see `_await`) while the promise is pending: it never runs, and what
  /// it captured is released at once, after the lock (deinitialisers are user code). Once the promise has
  /// settled this does nothing: a delivery may hold the observer already, and whoever withdraws has decided
  /// by other means that it is a no-op by then.
  @inlinable final func _withdraw(_ place: Int) {
    let taken: _Observer<Success, Failure>? = _withLock {
      guard _phase == .pending else { return nil }
      guard place >= 0 else { return _first.take() }
      return _Waiter.take(place, from: &_more)
    }
    _ = consume taken
  }
}

nonisolated extension _Waiter {
  /// Takes the observer numbered `number` out of `waiters`, leaving a gap; drops the gaps at the end (and the
  /// array, once only its head is left), every gap once they outnumber the observers, and moves the rest to
  /// smaller storage once it is three-quarters unused.
  @inlinable static func take(_ number: Int, from waiters: inout [Self]?) -> _Observer<Success, Failure>? {
    guard var all = waiters.take() else { return nil }
    // Through the storage's address, never a copy of an element: copied by unspecialised code (a caller
    // generic over the promise's types), an element costs an allocation.
    let (taken, end, gaps) = all.withUnsafeMutableBufferPointer {
      buffer -> (_Observer<Success, Failure>?, Int, Int) in
      let head = buffer.baseAddress.unsafelyUnwrapped
      var (low, high) = (1, buffer.count)
      while low < high {
        let middle = (low + high) / 2
        if (head + middle).pointee.number < number { low = middle + 1 } else { high = middle }
      }
      let taken =
        low < buffer.count && (head + low).pointee.number == number
        ? (head + low).pointee.observer.take() : nil
      if taken != nil { head.pointee.number -= 1 }  // one gap more
      var end = buffer.count
      while end > 1, (head + end - 1).pointee.observer == nil {  // the gaps at the end go
        end -= 1
        head.pointee.number += 1
      }
      return (taken, end, head.pointee.gaps)
    }
    all.removeLast(all.count - end)
    if gaps > (all.count - 1) / 2 { compact(&all) }
    if all.count < all.capacity / 4 { all = all.withUnsafeBufferPointer { Array($0) } }  // a smaller copy
    waiters = all.count == 1 ? nil : all
    return taken
  }
}

// MARK: - Records (internal)

nonisolated extension _Extras {
  // The other half of the trick the core's generic `forStep` describes: Swift prefers this non-generic
  // overload wherever this file is in the module, so every step — the core's own included — gets its
  // extras here. A `thenAsync` or `recoverAsync` step (`adopts`) always gets a record, whatever its input:
  // the promise it will adopt may be cancellable, and a request from the end of the chain must reach it.
  /// The extras of a step made from a promise with `input`, and its depth: `input`'s record, shared, if
  /// `input` is the last step of its stretch; a dependent record if `input` can be cancelled otherwise; a
  /// fresh record if the step adopts another promise; otherwise none.
  @inlinable static func forStep(from input: _Extras?, at depth: UInt8, adopts: Bool) -> (_Extras?, UInt8) {
    if let record = input as? _Cancellation, let next = record.extend(from: depth, adopts: adopts) {
      return next < .max ? (record, next) : (_Cancellation(after: record), 0)
    }
    return (input?.dependent(on: nil, at: depth) ?? (adopts ? _Cancellation() : nil), 0)
  }

  // The same trick for `MainActorPromise.cancel()` and `abandoningOnCancel(with:)`: the main-actor file
  // declares generic fallbacks, and Swift prefers these more specific overloads wherever this file is in
  // the module.
  /// Asks the work behind `promise` to stop; see ``ResultPromise/cancel()``.
  static func requestCancel<Success, Failure>(_ promise: ResultPromise<Success, Failure>) {
    promise.cancel()
  }

  /// `promise.abandoningOnCancel(with: failure())`; see ``ResultPromise/abandoningOnCancel(with:file:line:)``.
  static func abandoning<Success, Failure>(
    _ promise: ResultPromise<Success, Failure>, with failure: @escaping @Sendable () -> Failure,
    at file: StaticString, _ line: UInt
  ) -> ResultPromise<Success, Failure> {
    promise._abandoning(failure, at: file, line)
  }
}

/// The cancellation record of a promise that can be cancelled, and of the steps that share it; see the
/// overview at the top of this file.
///
/// How it changes, under its lock (D: the depth of the promise concerned, 0 the first promise; `tip`: the
/// last step sharing the record). The first promise is `open`, then `cancelled` or `settled`, never both.
/// - A step made from the tip: `tip += 1`, and a step that adopts joins `waiting`. From any other promise: a
///   record of its own, counted as a dependent at D.
/// - A dependent counted at D (`count`): `interest += 1` at 0, otherwise `others += 1` in the branch at D.
/// - A dependent of D lets go (`lettingGo`), or the step at D settles or hears a request (`direct`: the step
///   before it hears that its next step has gone): the walk goes down from D. Each branch on the way loses
///   that dependent, or notes its next step gone, and stops the walk while it keeps any. At the bottom,
///   `interest -= 1` or `nextGone`; the first promise is cancelled once `interest == 0` and its next step has
///   gone or it has none. A request made on the first promise itself cancels it at once. The waiting steps the
///   walk passed stop waiting, and what they adopted is let go.
/// - A waiting step adopts a promise: kept in `adopted`, let go when a request passes; a step no longer
///   waiting lets it go at once.
/// - The first promise settles: `settled`; its handlers are released unrun, and what it waits for is let go.
///   A request reaches it first: `cancelled`; its handlers run (through the thread's queue of work), and what
///   it waits for is let go, in the request loop.
///
/// `CancellationModelTests` checks all this against a naive model with one record per promise. That simpler
/// design, measured (fresh processes, 30 rounds alternated): 2 allocations a step, but 1.62× S9's time a step
/// settled and 2.03× cancelled (1.46× and 1.68× its instructions).
///
/// `@unchecked Sendable`: every mutable field is read and written only under its lock (`withLock`), except
/// before the record is shared (`upstream`, set by whoever makes it).
@usableFromInline final nonisolated class _Cancellation: _Extras, @unchecked Sendable {
  @usableFromInline enum State { case open, cancelled, settled }
  /// Where the first promise stands.
  @exclusivity(unchecked) @usableFromInline var state = State.open
  /// Whether the first promise's next step has let it go.
  @exclusivity(unchecked) @usableFromInline var nextGone = false
  /// The depth of the last step that shares the record; 0 while the first promise has no next step. A
  /// byte, as a promise's depth is: a record is shared by at most 254 steps, and 255 says that the last of
  /// them has a next step, which starts a record of its own (`init(after:)`).
  @exclusivity(unchecked) @usableFromInline var tip: UInt8 = 0
  /// The depth of `upstream`'s promise among those that share its record.
  @exclusivity(unchecked) @usableFromInline var upstreamDepth: UInt8 = 0
  #if canImport(Darwin)
    /// Runs `body` holding this record's lock: its stripe of the shared table (see `_Lock`).
    @inlinable func withLock<T>(_ body: () -> T) -> T { _Lock(for: self).withLock(body) }
  #else
    /// This record's lock: a word of its own, in what would otherwise be padding, as a promise has.
    @usableFromInline let word = Atomic<UInt32>(0)
    /// Runs `body` holding this record's lock.
    @inlinable func withLock<T>(_ body: () -> T) -> T { _Lock.withLock(word, body) }
  #endif
  /// The first promise's dependents beside its next step.
  @exclusivity(unchecked) @usableFromInline var interest = 0
  /// The record of what the first promise waits for now; counted as one of that promise's dependents.
  @exclusivity(unchecked) @usableFromInline var upstream: _Cancellation?
  /// What only a few records have, made on first use; `nil` along a chain, which so is made, settled,
  /// cancelled and freed without touching an array.
  @exclusivity(unchecked) @usableFromInline var rest: Rest?

  /// What stops the work, until a request runs them or the first promise settles; what a combinator waits
  /// for, each counted as one of its dependents; the branches; and the steps that adopt. A class, so that a
  /// record without it stays small. `@exclusivity(unchecked)`: used only under the record's lock.
  @usableFromInline final class Rest {
    @exclusivity(unchecked) @usableFromInline var handlers: [@Sendable () -> Void] = []
    @exclusivity(unchecked) @usableFromInline var inputs: [_Place] = []
    @exclusivity(unchecked) @usableFromInline var branches: [Branch] = []
    /// The steps that adopt another promise and still wait: neither settled nor reached by a request.
    @exclusivity(unchecked) @usableFromInline var waiting = Depths()
    /// The cancellable promises that waiting steps adopted.
    @exclusivity(unchecked) @usableFromInline var adopted: [Adopted] = []
    /// What lets go of the first promise's own registrations once it settles, however (`whenSettled`).
    @exclusivity(unchecked) @usableFromInline var onSettle: (@Sendable () -> Void)?
    @usableFromInline init() {}
  }
  /// A step that has dependents beside its next step: `others` of them, and whether the next step has let
  /// it go. Kept in order of depth.
  @usableFromInline typealias Branch = (depth: UInt8, others: Int, nextGone: Bool)
  /// The first promise's work, as it is taken out of `rest` when that promise settles or is cancelled.
  @usableFromInline typealias Work = (handlers: [@Sendable () -> Void], inputs: [_Place])

  /// A cancellable promise that the waiting step at `depth` adopted: its record, and its depth in it. The
  /// record is held weakly. The adopted promise may have been made from an earlier step of this very stretch,
  /// so that its record points up to this one, and a strong reference back would make a cycle that outlives
  /// an abandoned chain. The adopted promise, and anything still waiting for it, keeps its record alive.
  @usableFromInline struct Adopted {
    @usableFromInline let depth: UInt8
    @usableFromInline weak var record: _Cancellation?
    @usableFromInline let recordDepth: UInt8
  }

  /// A set of depths, as 256 bits.
  @usableFromInline struct Depths {
    @usableFromInline var words = SIMD4<UInt64>()
    @usableFromInline var isEmpty: Bool { words == .zero }
    @usableFromInline func contains(_ depth: UInt8) -> Bool {
      words[Int(depth) >> 6] & 1 << (depth & 63) != 0
    }
    @usableFromInline mutating func insert(_ depth: UInt8) { words[Int(depth) >> 6] |= 1 << (depth & 63) }
    /// Removes every depth from `low` through `high` (0…255).
    @usableFromInline mutating func remove(from low: Int, through high: Int) {
      @inline(__always) func kept(_ word: Int) -> UInt64 {  // the bits of that word outside `low...high`
        let (first, last) = (max(low - word << 6, 0), min(high - word << 6, 63))
        return first > last ? .max : ~((UInt64.max &>> (63 - last + first)) &<< first)
      }
      words &= SIMD4(kept(0), kept(1), kept(2), kept(3))
    }
  }

  @usableFromInline override init(queue: DispatchQueue? = nil) { super.init(queue: queue) }

  /// The record of a step made from the last of the 254 steps that `record` can share: its first promise is
  /// that step's next step, at depth 255 of `record`, which no promise sharing a record has.
  @usableFromInline init(after record: _Cancellation) {
    (upstream, upstreamDepth) = (record, .max)
    super.init(queue: nil)
  }

  // A record releases what it waits for, and each of those what they wait for, in this loop: a tower of
  // combinators, or a long chain of adopting steps, would otherwise be freed recursively. A record is
  // taken apart only when this loop holds the last reference to it, so no other thread can reach it.
  deinit {
    guard upstream != nil || rest?.inputs.isEmpty == false else { return }
    var released: [_Cancellation] = []
    moveWhatItWaitsFor(to: &released)
    while var record = released.popLast() {
      if isKnownUniquelyReferenced(&record) { record.moveWhatItWaitsFor(to: &released) }
    }
  }

  /// Whether a request has come (and the first promise had not settled before it).
  @usableFromInline var isCancelled: Bool { withLock { state == .cancelled } }

  /// The depth of a step made from the promise at `depth`, if it shares this record as that promise's next
  /// step: only the last step of the stretch has none yet, and a promise with a queue shares with nobody. A
  /// step that `adopts` another promise waits from now on.
  @usableFromInline func extend(from depth: UInt8, adopts: Bool) -> UInt8? {
    guard queue == nil else { return nil }
    return withLock {
      guard depth == tip, tip < .max else { return nil }
      tip += 1
      if adopts, tip < .max { waits(at: tip) }
      return tip
    }
  }

  /// Under the lock: the step at `depth` adopts another promise, and waits. Apart, to keep `extend` small.
  @inline(never) @usableFromInline func waits(at depth: UInt8) { made.waiting.insert(depth) }

  /// Under the lock: whether a request can still change anything — the first promise is open, or a step
  /// that adopts is waiting.
  @usableFromInline var isLive: Bool { state == .open || rest?.waiting.isEmpty == false }

  /// A record for a promise made from the one at `depth`, counted as its dependent (unless the record is no
  /// longer live: then nothing wants anything from it).
  @usableFromInline override func dependent(on queue: DispatchQueue?, at depth: UInt8) -> _Extras? {
    let record = _Cancellation(queue: queue)
    if count(at: depth) { (record.upstream, record.upstreamDepth) = (self, depth) }
    return record
  }

  /// The promise at `depth` has its outcome. The first promise's handlers are released unrun, and it lets
  /// go of what it waited for; a step lets go of the promise before it.
  @usableFromInline override func settled(at depth: UInt8) {
    guard depth == 0 else { return lettingGo(at: depth, direct: true) }
    // What it waited for, unless a request has let it go already; and its handlers and inputs, which are
    // released after the lock: what the handlers capture may have deinitialisers (user code).
    // Taken out through a variable, not returned through the generic `withLock`: a closure returned from it
    // is re-abstracted, an allocation each way.
    var onSettle: (@Sendable () -> Void)?
    let (letGo, taken): (_Place??, Work?) = withLock {
      defer { state = .settled }
      onSettle = rest?.onSettle.take()
      return (state == .open ? .some(upstream.take().map { ($0, upstreamDepth) }) : nil, takeWork())
    }
    onSettle?()
    guard let letGo else { return }
    if let inputs = taken?.inputs, !inputs.isEmpty {
      _Cancellation.request(letGo?.record, at: letGo?.depth ?? 0, direct: false, andAll: inputs)
    } else if let letGo {
      letGo.record.lettingGo(at: letGo.depth)
    }
  }

  /// One dependent of the promise at `depth` lets go (a step's input, the common case: most often one that
  /// has settled already), or the step at `depth` itself does (`direct`: it has settled); when that leaves
  /// the first promise unwanted, the request loop takes over.
  @inline(__always) @usableFromInline func lettingGo(at depth: UInt8, direct: Bool = false) {
    guard let (cancels, reached) = withLock({ withdraw(at: depth, direct: direct) }),
      cancels || !reached.isEmpty
    else { return }
    _Cancellation.request(cancels ? self : nil, at: 0, direct: cancels, andAll: reached)
  }

  /// The promise at `step` now settles like the promise at `depth` of `other`: it waits for that instead.
  /// If a request has reached it already, or it has settled, `other` hears it at once (it is let go as
  /// soon as it is counted).
  @usableFromInline override func adopt(_ other: _Extras?, at depth: UInt8, for step: UInt8) {
    // A promise with nothing to cancel changes nothing: what this one waited for until now has settled
    // (a step adopts once its input has its outcome, `retry` once its attempt or wait has), so a request
    // that still travels there stops at once, and this record lets it go when it settles. No lock.
    guard let adopted = other as? _Cancellation else { return }
    let counted = adopted.count(at: depth) ? adopted : nil
    guard step == 0 else {  // a step sharing the record: it waits for `counted` unless it is waiting no more
      let waits = withLock {
        guard let counted, rest?.waiting.contains(step) == true else { return false }
        made.adopted.append(Adopted(depth: step, record: counted, recordDepth: depth))
        return true
      }
      return waits ? () : _Cancellation.request(counted, at: depth, direct: false)
    }
    let (letGo, letGoDepth): (_Cancellation?, UInt8) = withLock {
      guard state == .open else { return (counted, depth) }
      defer { (upstream, upstreamDepth) = (counted, depth) }
      return (upstream, upstreamDepth)
    }
    _Cancellation.request(letGo, at: letGoDepth, direct: false)
  }

  /// The record of a promise made from every promise whose extras and depth are `inputs` (a combinator's
  /// result), or `nil` when none of them can be cancelled.
  @inlinable static func combining(_ inputs: some Sequence<(_Extras?, UInt8)>) -> _Cancellation? {
    var record: _Cancellation?
    for (input, depth) in inputs { combine(input, at: depth, into: &record) }
    return record
  }

  /// Adds the promise at `depth` with `input` to what a combinator's result waits for: `record`, made when
  /// the first input that can be cancelled comes (`nil` until then).
  @inlinable static func combine(_ input: _Extras?, at depth: UInt8, into record: inout _Cancellation?) {
    guard input is _Cancellation else { return }
    record = record ?? _Cancellation()
    record.unsafelyUnwrapped.include(input, at: depth)
  }

  /// Adds the promise at `depth` of `other` to what the first promise waits for, beside the rest; let go
  /// at once if a request has come.
  @usableFromInline func include(_ other: _Extras?, at depth: UInt8) {
    guard let other = other as? _Cancellation, other.count(at: depth) else { return }
    let open = withLock {
      guard state == .open else { return false }
      made.inputs.append((other, depth))
      return true
    }
    if !open { _Cancellation.request(other, at: depth, direct: false) }
  }

  /// Registers a handler that stops the first promise's work: run on a request, at once if one has come.
  @usableFromInline func onCancel(_ handler: @escaping @Sendable () -> Void) {
    let now: Bool = withLock {
      guard state == .open else { return state == .cancelled }
      made.handlers.append(handler)
      return false
    }
    if now { _Cancellation.run([handler], for: self) }
  }

  /// Registers `body` to run once the first promise settles, whoever settles it (at once if it has): the
  /// operator that made that promise lets go there of what it registered elsewhere, so that a promise settled
  /// by hand keeps nothing waiting (a timer, an observer on a shared promise). Runs on the settling thread,
  /// before the promise's observers, outside every lock.
  @usableFromInline func whenSettled(_ body: @escaping @Sendable () -> Void) {
    let now: Bool = withLock {
      guard state != .settled else { return true }
      guard let before = made.onSettle else {
        made.onSettle = body
        return false
      }
      made.onSettle = {
        before()
        body()
      }
      return false
    }
    if now { body() }
  }

  /// Once the first promise settles, however it settles, takes `input` back (unless it ran at once): a promise
  /// an operator made keeps nothing waiting on its input once decided. Once per registration.
  @inlinable func whenSettled<S, F>(withdrawing input: _Registration<S, F>) {
    guard input.place != nil else { return }
    whenSettled { input.withdraw() }
  }

  /// A request made on the promise at `depth` itself.
  @usableFromInline func cancel(at depth: UInt8) { _Cancellation.request(self, at: depth, direct: true) }

  /// Counts one more dependent of the promise at `depth`; `false` if the record is no longer live and its
  /// first promise has settled, so nothing is to be let go later.
  @usableFromInline func count(at depth: UInt8) -> Bool {
    withLock {
      guard isLive else { return state == .cancelled }  // and a request no longer changes anything
      if depth == 0 { interest += 1 } else { branch(at: depth) }
      return true
    }
  }

  /// Under the lock: counts one more dependent beside its next step of the step at `depth`.
  @usableFromInline func branch(at depth: UInt8) {
    let rest = made
    let index = rest.branches.firstIndex { $0.depth >= depth }
    if let index, rest.branches[index].depth == depth {
      rest.branches[index].others += 1
    } else {
      rest.branches.insert((depth, 1, false), at: index ?? rest.branches.endIndex)
    }
  }

  /// Under the lock: `rest`, made if it was not there yet.
  @usableFromInline var made: Rest {
    if let rest { return rest }
    rest = Rest()
    return rest.unsafelyUnwrapped
  }

  /// Moves what the first promise waits for to the end of `list`; by the one thread that can reach the
  /// record.
  @usableFromInline func moveWhatItWaitsFor(to list: inout [_Cancellation]) {
    list += rest.take()?.inputs.map(\.record) ?? []
    if let above = upstream.take() { list.append(above) }
  }

  /// Under the lock: a request reaches the promise at `depth` — made on it (`direct`), or one of its
  /// dependents other than its next step lets it go — and travels down the stretch (see `walk`). Returns
  /// `nil` once the record is no longer live, when nothing here changes any more; otherwise whether the
  /// first promise is to be cancelled now (the caller marks it), and what the waiting steps the request
  /// reached had adopted, to be let go.
  @inline(__always) @usableFromInline func withdraw(
    at depth: UInt8, direct: Bool
  ) -> (cancels: Bool, reached: [_Place])? {
    guard isLive else { return nil }
    let (cancels, low, high) = walk(from: depth, direct: direct)
    return (cancels, reach(low, high))
  }

  /// Under the lock: a request travels down the stretch from `start`: a step lets go of the promise before
  /// it once nothing wants it any more. Returns whether the first promise is to be cancelled now, and the
  /// steps reached, from `high` down to `low` (none if `low > high`).
  /// Steps keep no state of their own: only those with other dependents have a branch, and a step that
  /// has already let go (by a request or by settling) lets go again harmlessly, since the branch below it,
  /// or the first promise, knows that its next step has gone.
  @usableFromInline func walk(from start: UInt8, direct: Bool) -> (cancels: Bool, low: Int, high: Int) {
    // A request made on a step — or one from the next record's first promise, at depth 255 — is what the step
    // before it hears from its next step.
    var (depth, fromNext) = (start, direct || start == .max)
    var (low, high) = (Int(start) + (direct ? 0 : 1), Int(min(start, .max - 1)))
    if fromNext {
      guard depth > 0 else { return (state == .open, low, high) }
      depth -= 1
    }
    while depth > 0, let rest, let index = rest.branches.lastIndex(where: { $0.depth <= depth }) {
      depth = rest.branches[index].depth  // the steps between have nothing else
      if fromNext {
        low = Int(depth) + 1
        guard !rest.branches[index].nextGone else { return (false, low, high) }
        rest.branches[index].nextGone = true
      } else {
        rest.branches[index].others -= 1
      }
      let branch = rest.branches[index]
      guard branch.others == 0, branch.nextGone || depth == tip else { return (false, low, high) }
      (low, depth, fromNext) = (Int(depth), depth - 1, true)
    }
    if fromNext || depth > 0 {
      if fromNext, depth > 0 { low = 1 }
      guard !nextGone else { return (false, low, high) }
      nextGone = true
    } else {
      interest -= 1
    }
    return (state == .open && interest == 0 && (nextGone || tip == 0), low, high)
  }

  /// Under the lock: a request has reached the steps at depths `low...high`. Those that adopt stop waiting;
  /// returns what they adopted.
  @usableFromInline func reach(_ low: Int, _ high: Int) -> [_Place] {
    guard low <= high, let rest, !rest.waiting.isEmpty else { return [] }
    rest.waiting.remove(from: low, through: high)
    guard !rest.adopted.isEmpty else { return [] }
    var found: [_Place] = []
    rest.adopted.removeAll { adopted in
      guard low...high ~= Int(adopted.depth) else { return false }
      if let record = adopted.record { found.append((record, adopted.recordDepth)) }
      return true
    }
    return found
  }

  /// Under the lock: the first promise's handlers and inputs, taken out to be run or let go after the lock.
  /// `rest` goes with them, unless a step that adopts still needs it.
  @usableFromInline func takeWork() -> Work? {
    guard let rest else { return nil }
    defer {
      if rest.waiting.isEmpty, rest.onSettle == nil {
        self.rest = nil
      } else {
        (rest.handlers, rest.inputs) = ([], [])
      }
    }
    return (rest.handlers, rest.inputs)
  }

  /// Delivers requests: to the promise at `depth` of `record` itself if `direct`, otherwise as a dependent
  /// letting it (and `others`) go. A record whose first promise is cancelled runs its handlers and lets go
  /// of what it waits for in turn, and what the steps that adopt, reached on the way, adopted — in this loop,
  /// so a chain of any length takes constant stack depth.
  @usableFromInline static func request(
    _ record: _Cancellation?, at depth: UInt8, direct: Bool, andAll others: [_Place] = []
  ) {
    var (next, depth, others, direct) = (record, depth, others, direct)
    while true {
      if next == nil, let (record, at) = others.popLast() { (next, depth) = (record, at) }
      guard let record = next else { return }
      let isDirect = direct  // only the first place, and only if asked
      (next, direct) = (nil, false)
      // nil: the request stops here. Otherwise what the first promise waited for, its handlers and inputs.
      let cancelled: (_Cancellation?, UInt8, Work?)? = record.withLock {
        guard let (cancels, reached) = record.withdraw(at: depth, direct: isDirect) else { return nil }
        others += reached
        guard cancels else { return nil }
        record.state = .cancelled
        return (record.upstream.take(), record.upstreamDepth, record.takeWork())
      }
      guard let (upstream, upstreamDepth, work) = cancelled else { continue }
      if let work {
        run(work.handlers, for: record)
        others += work.inputs
      }
      (next, depth) = (upstream, upstreamDepth)
    }
  }

  /// Runs handlers on this thread, through its queue of work: after the callback running now, if any.
  @usableFromInline static func run(_ handlers: [@Sendable () -> Void], for record: _Cancellation) {
    for handler in handlers {
      _Trampoline.withCurrent { $0.run(_Job(record) { _ in handler() }) }
    }
  }
}

/// A promise's place among those that share a record: the record, and how many steps from its first
/// promise it is.
@usableFromInline typealias _Place = (record: _Cancellation, depth: UInt8)

nonisolated extension _Flags {
  /// `cancel()` has said, in a debug build, that this promise cannot be cancelled: it says so once.
  @inlinable static var toldCannotCancel: Self { Self(rawValue: 8) }
}
