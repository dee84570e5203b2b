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
// Which promises have one. A promise made with `onCancel`, by a timer or a `Task`, or by an operator from
// a promise that has one; and every promise a `thenAsync` or `recoverAsync` step makes, whatever its
// input, because the promise it will adopt may be cancellable: so a request from the end of a chain
// reaches the work it adopted, whatever its first promise was (a value, a plain `ResultPromise { done in
// … }`, the result of `ignoringCancel()`). The core asks for a step's record through `_Extras.forStep`;
// this file's overload of it is the one that gives adopting steps a record.
//
// A request. `cancel()` marks the record cancelled, runs its handlers, and *withdraws* from what it waits
// for: the record above loses one dependent, and is cancelled in turn when that was its last (a shared
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
  /// - Parameters:
  ///   - start: Starts the work, registers its handlers with `onCancel`, and arranges for `fulfil` to be
  ///     called with its outcome.
  ///   - file: Where the promise is made, for the broken-promise report; leave the default.
  ///   - line: The line where the promise is made, for the report; leave the default.
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
  /// for a request that comes before the promise settles (and possibly while the work settles it).
  /// - Parameters:
  ///   - start: Starts the work, registers its handlers with `onCancel`, and arranges for `fulfil` to be
  ///     called with its outcome.
  ///   - file: Where the promise is made, for the broken-promise report; leave the default.
  ///   - line: The line where the promise is made, for the report; leave the default.
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
  /// the `Task` of ``init(priority:operation:)``, and the handlers registered with `onCancel`. On the way
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
  /// thread (after the callback that is running, if called from inside one), never under a lock.
  public func cancel() {
    if let record = _extras as? _Cancellation { return record.cancel() }
    #if DEBUG
      guard _CannotCancelReports.first(for: self) else { return }
      let problem = "cannot be cancelled, so cancel() does nothing"
      let made = _origin == nil ? " (it was made by an operator from a promise that cannot be)" : ""
      let remedy = "make it with ResultPromise { done, onCancel in … }, a thenAsync step, a timer or a Task"
      PromiseDiagnostics._report(self, "\(problem)\(made); to stop its work, \(remedy).")
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
  /// - Returns: A promise with this promise's outcome.
  public func ignoringCancel() -> ResultPromise<Success, Failure> {
    let next = ResultPromise(_pending: nil)
    _ = (_extras as? _Cancellation)?.count()  // a dependent that never lets go
    _await { next.fulfil(with: $0) }
    return next
  }

  /// Creates a pending user-made promise (reported if dropped while pending) with `record`.
  @inlinable convenience init(_userMade record: _Cancellation, file: StaticString, line: UInt) {
    self.init(_pending: record)
    _reportsBroken = true  // set before the promise is shared, so without the lock
    #if DEBUG
      _origin = (file, line)
    #endif
  }
}

// MARK: - Records (internal)

nonisolated extension _Extras {
  // The other half of the trick the core's generic `forStep` describes: Swift prefers this non-generic
  // overload wherever this file is in the module, so every step — the core's own included — gets its
  // extras here. A `thenAsync` or `recoverAsync` step (`adopts`) always gets a record, whatever its input:
  // the promise it will adopt may be cancellable, and a request from the end of the chain must reach it.
  /// The extras of a step made from a promise with `input`: a dependent record if `input` can be cancelled,
  /// a fresh record if the step adopts another promise, otherwise none.
  @inlinable static func forStep(from input: _Extras?, adopts: Bool) -> _Extras? {
    input?.dependent(on: nil) ?? (adopts ? _Cancellation() : nil)
  }

  // The same trick for `MainActorPromise.cancel()`: the main-actor file declares a generic fallback that
  // does nothing, and Swift prefers this more specific overload wherever this file is in the module.
  /// Asks the work behind `promise` to stop; see ``ResultPromise/cancel()``.
  static func requestCancel<Success, Failure>(_ promise: ResultPromise<Success, Failure>) {
    promise.cancel()
  }
}

/// The cancellation record of a promise that can be cancelled; see the overview at the top of this file.
///
/// `@unchecked Sendable`: every mutable field is read and written only under its lock (`withLock`), except
/// before the record is shared (`upstream`, `queue` set by whoever makes it).
@usableFromInline final nonisolated class _Cancellation: _Extras, @unchecked Sendable {
  @usableFromInline enum State { case open, cancelled, settled }
  @exclusivity(unchecked) @usableFromInline var state = State.open
  #if canImport(Darwin)
    /// Runs `body` holding this record's lock: its stripe of the shared table (see `_Lock`).
    @inlinable func withLock<T>(_ body: () -> T) -> T { _Lock(for: self).withLock(body) }
  #else
    /// This record's lock: a word of its own, in what would otherwise be padding, as a promise has.
    @usableFromInline let word = Atomic<UInt32>(0)
    /// Runs `body` holding this record's lock.
    @inlinable func withLock<T>(_ body: () -> T) -> T { _Lock.withLock(word, body) }
  #endif
  /// The dependents that still want the outcome.
  @exclusivity(unchecked) @usableFromInline var interest = 0
  /// What the promise waits for now; counted as one of its dependents.
  @exclusivity(unchecked) @usableFromInline var upstream: _Cancellation?
  /// What only a few records have, made on first use and moved out whole; `nil` in a step's record, which
  /// so settles, is cancelled and is freed without touching an array.
  @exclusivity(unchecked) @usableFromInline var rest: Rest?
  @usableFromInline let onQueue: DispatchQueue?

  /// What stops the work, until a request runs them or the promise settles; and what a combinator waits
  /// for, each counted as one of its dependents.
  @usableFromInline typealias Rest = (handlers: [@Sendable () -> Void], inputs: [_Cancellation])

  @usableFromInline init(queue: DispatchQueue? = nil) { onQueue = queue }

  // A record releases what it waits for, and each of those what they wait for, in this loop: a tower of
  // combinators, or a long chain, would otherwise be freed recursively. A record is taken apart only when
  // this loop holds the last reference to it, so no other thread can reach it meanwhile.
  deinit {
    guard upstream != nil || rest?.inputs.isEmpty == false else { return }
    var released: [_Cancellation] = []
    moveWhatItWaitsFor(to: &released)
    while var record = released.popLast() {
      if isKnownUniquelyReferenced(&record) { record.moveWhatItWaitsFor(to: &released) }
    }
  }

  @usableFromInline override var queue: DispatchQueue? { onQueue }

  /// Whether a request has come (and the promise had not settled before it).
  @usableFromInline var isCancelled: Bool { withLock { state == .cancelled } }

  /// A record for a promise made from this one, counted as its dependent (unless this one has settled:
  /// then it wants nothing from it).
  @usableFromInline override func dependent(on queue: DispatchQueue?) -> _Extras? {
    let record = _Cancellation(queue: queue)
    if count() { record.upstream = self }
    return record
  }

  /// The promise has its outcome: its handlers are released unrun, and it lets go of what it waited for.
  @usableFromInline override func settled() {
    // What it waited for, unless a request has let it go already; and its handlers and inputs, which are
    // released after the lock: what the handlers capture may have deinitialisers (user code).
    let (letGo, taken): (_Cancellation??, Rest?) = withLock {
      defer { state = .settled }
      return (state == .open ? .some(upstream.take()) : nil, rest.take())
    }
    guard let letGo else { return }
    if let inputs = taken?.inputs, !inputs.isEmpty {
      _Cancellation.request(letGo, direct: false, andAll: inputs)
    } else {
      letGo?.lettingGo()
    }
  }

  /// One dependent lets go (a step's input, the common case: most often one that has settled already);
  /// when it was the last, the request loop takes over.
  @usableFromInline func lettingGo() {
    let last = withLock {
      interest -= 1
      return state == .open && interest == 0
    }
    if last { _Cancellation.request(self, direct: true) }
  }

  /// The promise now settles like `other`'s promise: it waits for that instead. If a request has come
  /// already, `other` hears it at once (it is let go as soon as it is counted).
  @usableFromInline override func adopt(_ other: _Extras?) {
    // A promise with nothing to cancel changes nothing: what this one waited for until now has settled
    // (a step adopts once its input has its outcome, `retry` once its attempt or wait has), so a request
    // that still travels there stops at once, and this record lets it go when it settles. No lock.
    guard let adopted = other as? _Cancellation else { return }
    let counted = adopted.count() ? adopted : nil
    let letGo: _Cancellation? = withLock {
      guard state == .open else { return counted }
      defer { upstream = counted }
      return upstream
    }
    _Cancellation.request(letGo, direct: false)
  }

  /// The record of a promise made from every promise whose extras are `inputs` (a combinator's result),
  /// or `nil` when none of them can be cancelled.
  @inlinable static func combining(_ inputs: some Sequence<_Extras?>) -> _Cancellation? {
    var record: _Cancellation?
    for input in inputs where input is _Cancellation {
      record = record ?? _Cancellation()
      record.unsafelyUnwrapped.include(input)
    }
    return record
  }

  /// Adds `other` to what the promise waits for, beside the rest; let go at once if a request has come.
  @usableFromInline func include(_ other: _Extras?) {
    guard let other = other as? _Cancellation, other.count() else { return }
    let open = withLock {
      guard state == .open else { return false }
      if rest == nil { rest = ([], []) }
      rest?.inputs.append(other)
      return true
    }
    if !open { _Cancellation.request(other, direct: false) }
  }

  /// Registers a handler that stops the work: run on a request, at once if one has come.
  @usableFromInline func onCancel(_ handler: @escaping @Sendable () -> Void) {
    let now: Bool = withLock {
      guard state == .open else { return state == .cancelled }
      if rest == nil { rest = ([], []) }
      rest?.handlers.append(handler)
      return false
    }
    if now { _Cancellation.run([handler], for: self) }
  }

  /// A request made on this promise itself.
  @usableFromInline func cancel() { _Cancellation.request(self, direct: true) }

  /// Counts one more dependent; `false` if the promise has settled, so nothing is to be let go later.
  @usableFromInline func count() -> Bool {
    withLock {
      if state != .settled { interest += 1 }
      return state != .settled
    }
  }

  /// Moves what the promise waits for to the end of `list`; by the one thread that can reach the record.
  @usableFromInline func moveWhatItWaitsFor(to list: inout [_Cancellation]) {
    list += rest.take()?.inputs ?? []
    if let above = upstream.take() { list.append(above) }
  }

  /// Delivers requests: to `record` itself if `direct`, otherwise as a dependent letting it (and `others`)
  /// go. A record that is cancelled runs its handlers and lets go of what it waits for in turn — in this
  /// loop, so a chain of any length takes constant stack depth. Along a chain nothing is allocated.
  @usableFromInline static func request(
    _ record: _Cancellation?, direct: Bool, andAll others: [_Cancellation] = []
  ) {
    var (next, others, direct) = (record, others, direct)
    while let record = next ?? others.popLast() {
      let isDirect = direct  // only the first record, and only if asked
      (next, direct) = (nil, false)
      // nil: the request stops here. Otherwise what the record waited for, and its handlers and inputs.
      let cancelled: (_Cancellation?, Rest?)? = record.withLock {
        if !isDirect { record.interest -= 1 }
        guard record.state == .open, isDirect || record.interest == 0 else { return nil }
        record.state = .cancelled
        return (record.upstream.take(), record.rest.take())
      }
      guard let (upstream, rest) = cancelled else { continue }
      if let rest {
        run(rest.handlers, for: record)
        others += rest.inputs
      }
      next = upstream
    }
  }

  /// Runs handlers on this thread, through its queue of work: after the callback running now, if any.
  @usableFromInline static func run(_ handlers: [@Sendable () -> Void], for record: _Cancellation) {
    for handler in handlers {
      _Trampoline.withCurrent { $0.run(_Job(record) { _ in handler() }) }
    }
  }
}

#if DEBUG
  /// The promises already reported as not cancellable, so that each is reported once. Debug builds only.
  nonisolated enum _CannotCancelReports {
    private final class Seen: @unchecked Sendable {  // `promises` is used only under its lock
      var promises: [ObjectIdentifier: Weak] = [:]
    }
    private struct Weak { weak var promise: AnyObject? }
    private static let seen = Seen()

    /// `true` the first time it is asked about `promise` (while that promise lives).
    static func first(for promise: AnyObject) -> Bool {
      _Lock(for: seen).withLock {
        let id = ObjectIdentifier(promise)
        if seen.promises[id]?.promise === promise { return false }
        seen.promises = seen.promises.filter { $0.value.promise != nil }
        seen.promises[id] = Weak(promise: promise)
        return true
      }
    }
  }
#endif
