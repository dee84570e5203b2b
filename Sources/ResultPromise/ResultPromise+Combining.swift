// Combining many promises into one: all, zip, race, any, allSettled — and AggregateError.
//
// Each combinator registers one observer per input and keeps its results in input order, whatever
// order the inputs settle in. Inputs that settle inside each other's observers are delivered through
// the per-thread queue like any other observer, so a million inputs settle in constant stack depth.
// `all(_:concurrently:)` and `allSettled(_:concurrently:)` take makers instead, and call them a few at a
// time (`_Pump`).
//
// A combinator's result is a dependent of every input (see `cancel()`): cancelling it reaches them all,
// and once it has settled it lets go of those still pending — `race` its losers, `any` the rest after the
// first success, `all` and `zip` the rest after the first failure — each stopped only if nothing else
// wants it. It also takes back the observers it registered on them (`_Withdrawer`), so a long-lived input
// keeps nothing of a combinator that was decided without it.
//
// This file needs the core file and `ResultPromise+Cancellation.swift` beside it.

/// The failure of ``ResultPromise/any(_:file:line:)`` when every input fails: all their errors, in input order.
///
/// ```swift
/// ResultPromise.any([primary.load(id), mirror.load(id)]).onFailure { aggregate in
///     print("all \(aggregate.errors.count) sources failed:", aggregate.errors)
/// }
/// ```
public nonisolated struct AggregateError<Failure: Error>: Error {
  /// Every failure, in the order of the inputs they came from.
  ///
  /// ```swift
  /// ResultPromise.any(mirrors).onFailure { aggregate in aggregate.errors.forEach { log($0) } }
  /// ```
  public var errors: [Failure]

  /// Creates an aggregate of `errors`.
  ///
  /// ```swift
  /// let none = AggregateError<MyError>(errors: [])
  /// ```
  /// - Parameter errors: The failures, in input order.
  public init(errors: [Failure]) {
    self.errors = errors
  }
}

nonisolated extension AggregateError: Equatable where Failure: Equatable {}

nonisolated extension ResultPromise {
  /// Succeeds with every value, in input order, once all inputs succeed; fails with the first failure
  /// to happen.
  ///
  /// ```swift
  /// ResultPromise.all(ids.map(load)).onSuccess { users in show(users) }
  /// ```
  ///
  /// An empty collection succeeds at once with `[]`. Settles on the thread that settles the deciding
  /// input. After a failure it lets the other inputs go: those that nothing else wants are asked to stop
  /// (see ``cancel()``). Like `Promise.all` in JavaScript and `EventLoopFuture.whenAllSucceed` in
  /// swift-nio.
  ///
  /// A request on the returned promise passes on to the inputs and, as any request, decides nothing: until
  /// it is decided, its registrations stay on the inputs. A caller who must leave at once uses
  /// ``abandoningOnCancel(with:file:line:)`` on the result.
  /// - Parameters:
  ///   - promises: The inputs.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of all values in input order, or of the first failure.
  @inlinable
  public static func all(
    _ promises: some Collection<ResultPromise<Success, Failure>>, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<[Success], Failure> {
    _gather(promises, at: file, line, decidedEarly: { _firstFailure($0) }, decided: { _allValues($0) })
  }

  /// Succeeds with every outcome, in input order, once all inputs have settled; it cannot fail.
  ///
  /// ```swift
  /// ResultPromise.allSettled(uploads).onSuccess { outcomes in
  ///     let failed = outcomes.filter { if case .failure = $0 { true } else { false } }
  ///     print("\(failed.count) uploads failed")
  /// }
  /// ```
  ///
  /// An empty collection succeeds at once with `[]`. It never lets an input go early; a request on the
  /// returned promise reaches every input. Like `Promise.allSettled` in JavaScript.
  /// - Parameters:
  ///   - promises: The inputs.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of every input's result, in input order.
  @inlinable
  public static func allSettled(
    _ promises: some Collection<ResultPromise<Success, Failure>>, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<[Result<Success, Failure>], Never> {
    _gather(promises, at: file, line, decidedEarly: { _ in nil }, decided: { .success($0) })
  }

  /// Succeeds with the first input to succeed; if every input fails, fails with all their errors.
  ///
  /// ```swift
  /// ResultPromise.any([cache.load(id), remote.load(id)])
  ///     .onSuccess { user in show(user) }
  ///     .onFailure { aggregate in print(aggregate.errors) }
  /// ```
  ///
  /// An empty collection fails at once with an empty ``AggregateError``. After the first success it lets
  /// the other inputs go: those that nothing else wants are asked to stop (see ``cancel()``). Like
  /// `Promise.any` in JavaScript. "First" is the first success whose delivery reaches `any`: an input
  /// whose delivery waits behind an observer still running on another thread may lose to one that
  /// succeeded later.
  ///
  /// A request on the returned promise passes on to the inputs and, as any request, decides nothing: until
  /// it is decided, its registrations stay on the inputs. A caller who must leave at once uses
  /// ``abandoningOnCancel(with:file:line:)`` on the result.
  /// - Parameters:
  ///   - promises: The inputs.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the first success, or of every failure in input order.
  @inlinable
  public static func any(
    _ promises: some Collection<ResultPromise<Success, Failure>>, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, AggregateError<Failure>> {
    _gather(
      promises, at: file, line,
      decidedEarly: { if case .success(let value) = $0 { .success(value) } else { nil } },
      decided: {
        .failure(
          AggregateError(errors: $0.compactMap { if case .failure(let error) = $0 { error } else { nil } }))
      })
  }

  /// Settles like the first input to settle, success or failure.
  ///
  /// ```swift
  /// ResultPromise.race([primary.load(id), mirror.load(id)]).onSuccess { show($0) }
  /// ```
  ///
  /// **An empty collection gives a promise that never settles**, as `Promise.race([])` does in
  /// JavaScript: there is no first input. Check for emptiness first if that can happen.
  /// Later inputs' results are ignored: once it has settled, it lets the losers go, and those that
  /// nothing else wants are asked to stop (see ``cancel()``). "First" is the first outcome whose delivery
  /// reaches the race: an input whose delivery waits behind an observer still running on another thread
  /// may lose to one that settled later.
  ///
  /// A request on the returned promise passes on to the inputs and, as any request, decides nothing: until
  /// it is decided, its registrations stay on the inputs. A caller who must leave at once uses
  /// ``abandoningOnCancel(with:file:line:)`` on the result.
  /// - Parameters:
  ///   - promises: The inputs.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise that settles like the first input to settle.
  @inlinable
  public static func race(
    _ promises: some Collection<ResultPromise<Success, Failure>>, file: StaticString = #fileID,
    line: UInt = #line
  ) -> ResultPromise<Success, Failure> {
    let race = _Race<Success, Failure>(
      _Cancellation.combining(promises.lazy.map { ($0._extras, $0._depth) }), at: file, line)
    for promise in promises {
      // An input that delivered at once has decided the race: the others need no observer.
      guard let place = promise._await({ if race.next.fulfil(with: $0) { race.stop() } }) else { break }
      race.watch(promise, at: place)
    }
    return race.next
  }

  /// Calls `makers` in order, with at most `limit` of the promises they make pending at once; succeeds
  /// with every value, in the order of the makers, or fails with the first failure and calls no more makers.
  ///
  /// ```swift
  /// // Upload 1,000 photos, four at a time.
  /// ResultPromise.all(photos.map { photo in { upload(photo) } }, concurrently: 4)
  ///     .onSuccess { receipts in print("uploaded \(receipts.count)") }
  /// ```
  ///
  /// The first makers are called at once, on the calling thread, until `limit` promises are pending; each
  /// time one settles, the next maker is called on the thread that settled it. The sequence is handed over
  /// (`sending`): it is used from those threads, one at a time, and no longer by the caller. So makers must
  /// not touch main-actor state; in main-actor code, write them as `@Sendable` closures (an overload below
  /// takes those) that call nonisolated code. A lazy sequence is pulled
  /// only as places come free, so makers can be made as they are needed:
  /// `(1...pages).lazy.map { page in { fetch(page) } }`. Once a failure has come in, no maker is called
  /// again (one whose turn began on another thread just before may still be); promises already pending run
  /// on, and their results are ignored. An empty sequence succeeds at once
  /// with `[]`. A `limit` below 1 counts as 1. Promises that settle at once (a cache hit) do not deepen the
  /// stack, however many there are. Like PromiseKit's `when(fulfilled:concurrently:)`.
  ///
  /// The returned promise can always be cancelled (see ``cancel()``): a request reaches the promises
  /// pending now, and stops the pulling. After it, a further maker is called only when a promise in flight
  /// succeeds in spite of the request (or when none is left in flight), and the promise it makes hears the
  /// request as it is made — so the failure a stopped promise reports soon ends the whole. Once the
  /// returned promise has settled, it lets go of the promises still pending.
  /// - Parameters:
  ///   - makers: Closures that each start one piece of work and return its promise.
  ///   - limit: The most promises pending at once.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of all values in the makers' order, or of the first failure.
  @inlinable
  public static func all<Makers: Sequence>(
    _ makers: sending Makers, concurrently limit: Int, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<[Success], Failure> where Makers.Element == () -> ResultPromise<Success, Failure> {
    _Pump(makers, limit: limit, stopsOnRequest: true, decidedEarly: _firstFailure, decided: _allValues)
      .start(at: file, line)
  }

  /// Calls `makers` in order, with at most `limit` of the promises they make pending at once; succeeds
  /// with every outcome, in the order of the makers, once all have settled. It cannot fail.
  ///
  /// ```swift
  /// ResultPromise.allSettled(records.lazy.map { record in { migrate(record) } }, concurrently: 2)
  ///     .onSuccess { outcomes in report(outcomes) }
  /// ```
  ///
  /// As `all(_:concurrently:)`, except that a failure does not end it: every maker is called. A request
  /// (see ``cancel()``) does not end it either, since it needs every outcome: it reaches the promises
  /// pending now, and each further maker is still called, its promise hearing the request as it is made —
  /// so the work still starts, and is asked to stop at once.
  /// - Parameters:
  ///   - makers: Closures that each start one piece of work and return its promise.
  ///   - limit: The most promises pending at once; below 1 counts as 1.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of every outcome, in the makers' order.
  @inlinable
  public static func allSettled<Makers: Sequence>(
    _ makers: sending Makers, concurrently limit: Int, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<[Result<Success, Failure>], Never>
  where Makers.Element == () -> ResultPromise<Success, Failure> {
    _Pump(makers, limit: limit, stopsOnRequest: false, decidedEarly: { _ in nil }, decided: { .success($0) })
      .start(at: file, line)
  }

  /// As the `all(_:concurrently:)` above, for makers that are `@Sendable` closures — as closures
  /// written in main-actor code must be, so that they do not belong to the main actor.
  ///
  /// ```swift
  /// @MainActor func syncAll() {
  ///     let api = self.api   // a Sendable service whose methods are nonisolated
  ///     ResultPromise.all(ids.map { id in { @Sendable in api.load(id) } }, concurrently: 4)
  ///         .onMainActor.await { result in self.show(result) }
  /// }
  /// ```
  /// - Parameters:
  ///   - makers: Closures that each start one piece of work and return its promise.
  ///   - limit: The most promises pending at once; below 1 counts as 1.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of all values in the makers' order, or of the first failure.
  @inlinable
  public static func all<Makers: Sequence>(
    _ makers: sending Makers, concurrently limit: Int, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<[Success], Failure>
  where Makers.Element == @Sendable () -> ResultPromise<Success, Failure> {
    all(makers.lazy.map { make in { make() } }, concurrently: limit, file: file, line: line)
  }

  /// As the `allSettled(_:concurrently:)` above, for makers that are `@Sendable` closures.
  ///
  /// ```swift
  /// ResultPromise.allSettled(ids.map { id in { @Sendable in api.load(id) } }, concurrently: 2)
  /// ```
  /// - Parameters:
  ///   - makers: Closures that each start one piece of work and return its promise.
  ///   - limit: The most promises pending at once; below 1 counts as 1.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of every outcome, in the makers' order.
  @inlinable
  public static func allSettled<Makers: Sequence>(
    _ makers: sending Makers, concurrently limit: Int, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<[Result<Success, Failure>], Never>
  where Makers.Element == @Sendable () -> ResultPromise<Success, Failure> {
    allSettled(makers.lazy.map { make in { make() } }, concurrently: limit, file: file, line: line)
  }

  /// `all`'s early decision: the first failure.
  @inlinable static func _firstFailure(_ result: Result<Success, Failure>) -> Result<[Success], Failure>? {
    if case .failure(let error) = result { return .failure(error) }
    return nil
  }

  /// `all`'s decision once every input has succeeded: the values, in input order.
  @inlinable static func _allValues(_ results: [Result<Success, Failure>]) -> Result<[Success], Failure> {
    .success(results.compactMap { try? $0.get() })
  }

  /// Watches every input; settles early with `decidedEarly`'s answer, else with `decided`'s once all
  /// inputs have settled (a no-op if it already settled early).
  @inlinable static func _gather<NewSuccess, NewFailure>(
    _ promises: some Collection<ResultPromise<Success, Failure>>, at file: StaticString, _ line: UInt,
    decidedEarly: @escaping (Result<Success, Failure>) -> Result<NewSuccess, NewFailure>?,
    decided: @escaping ([Result<Success, Failure>]) -> Result<NewSuccess, NewFailure>
  ) -> ResultPromise<NewSuccess, NewFailure> {
    let next = ResultPromise<NewSuccess, NewFailure>(
      _pending: _Cancellation.combining(promises.lazy.map { ($0._extras, $0._depth) })
    )._made(at: file, line)
    guard !promises.isEmpty else {
      next.fulfil(with: decided([]))
      return next
    }
    let results = _Results<Success, Failure>(count: promises.count)
    for (index, promise) in promises.enumerated() {
      let place = promise._await { result in
        if let early = decidedEarly(result), next.fulfil(with: early) { results.stop() }
        if results.record(result, at: index) { next.fulfil(with: decided(results.all)) }
      }
      results.watch(promise, at: place)
    }
    return next
  }
}

nonisolated extension ResultPromise where Success == Never {
  /// Succeeds with a tuple of every input's value, in argument order, once all succeed; fails with the
  /// first failure to happen. Takes any number of promises of different value types.
  ///
  /// ```swift
  /// ResultPromise.zip(loadUser(id), loadAvatar(id), loadSettings(id))
  ///     .onSuccess { user, avatar, settings in show(user, avatar, settings) }
  /// ```
  ///
  /// With no arguments it succeeds at once with `()`. After a failure it lets the other inputs go (see
  /// ``cancel()``). (`zip` lives where `Success == Never` so that `ResultPromise.zip(…)` needs no generic
  /// arguments, as `Task.sleep` lives on `Task<Never, Never>`.)
  ///
  /// A request on the returned promise passes on to the inputs and, as any request, decides nothing: until
  /// it is decided, its registrations stay on the inputs. A caller who must leave at once uses
  /// ``abandoningOnCancel(with:file:line:)`` on the result.
  /// - Parameters:
  ///   - promise: The inputs, all with the same `Failure`.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  /// - Returns: A promise of the tuple of values, or of the first failure.
  @inlinable
  public static func zip<each Value>(
    _ promise: repeat ResultPromise<each Value, Failure>, file: StaticString = #fileID, line: UInt = #line
  ) -> ResultPromise<(repeat each Value), Failure> {
    // Counted and combined in one pass, without an array (two allocations a call).
    var (record, count): (_Cancellation?, Int) = (nil, 0)
    for input in repeat each promise {
      _Cancellation.combine(input._extras, at: input._depth, into: &record)
      count += 1
    }
    let next = ResultPromise<(repeat each Value), Failure>(_pending: record)._made(at: file, line)
    // Each input's value goes to a slot of its own: the observers hold the slots, never the inputs, so
    // an input nobody else holds is released (and reported, if user-made) while the others wait.
    let slots = (repeat _Slot<each Value>())
    // What settles `next` is made here, outside the loop below, and each observer is made by `_observe`,
    // which sees one input's type and nothing of the pack. Swift 6.3.1 with -O miscompiles an escaping
    // closure made inside `for … in repeat each` that captures both the loop's element and anything
    // typed by the whole pack: it reads wrong type metadata and crashes (0.2.0 to 0.4.6). Reduced:
    //   func f<each V>(_ v: repeat each V) { for x in repeat each v { run { print(x, (repeat each v)) } } }
    // with `run` taking an `@escaping` closure it calls, crashes in `f(1, 2)` built with -O.
    let remaining = _Results<Void, Failure>(count: count)
    let settle = { (outcome: Result<Void, Failure>) in
      if next.fulfil(with: outcome.map { (repeat (each slots).value) }) { remaining.stop() }
    }
    guard count > 0 else {
      settle(.success(()))
      return next
    }
    var index = 0
    for (input, slot) in repeat (each promise, each slots) {
      _observe(input, into: slot, at: index, of: remaining, settle: settle)
      index += 1
    }
    return next
  }

  /// `zip`'s observer of one input: stores its value, and settles once every input has stored one, or
  /// at once with its failure.
  @inlinable static func _observe<Value>(
    _ input: ResultPromise<Value, Failure>, into slot: _Slot<Value>, at position: Int,
    of remaining: _Results<Void, Failure>, settle: @escaping (Result<Void, Failure>) -> Void
  ) {
    let place = input._await { result in
      switch result {
      case .failure(let error): settle(.failure(error))
      case .success(let value):
        slot.stored = value
        if remaining.record(.success(()), at: position) { settle(.success(())) }
      }
    }
    remaining.watch(input, at: place)
  }
}

/// One input's value for `zip`, written once by that input's observer. The last input's observer reads
/// every slot after `_Results.record`, whose lock orders those writes before the reads.
@usableFromInline final nonisolated class _Slot<Value> {
  @usableFromInline var stored: Value?
  @inlinable init() {}

  /// The value, which the slot has by the time every input has succeeded.
  @inlinable var value: Value {
    guard let stored else { preconditionFailure("ResultPromise.zip read an input that had not succeeded") }
    return stored
  }
}

/// `race`'s result, and (as a `_Withdrawer`) its observers on the inputs: one object for the observers to
/// capture, so that each needs no context of its own.
///
/// `@unchecked Sendable`: `next` never changes, and the withdrawer's state is used only under its lock.
@usableFromInline final nonisolated class _Race<Success, Failure: Error>: _Withdrawer, @unchecked Sendable {
  @usableFromInline let next: ResultPromise<Success, Failure>
  @inlinable init(_ extras: _Extras?, at file: StaticString, _ line: UInt) {
    next = ResultPromise(_pending: extras)._made(at: file, line)
    super.init()
  }
}

/// The results a combinator has seen so far, in input order; and, as a `_Withdrawer`, its observers on the
/// inputs, withdrawn once it is decided.
///
/// `@unchecked Sendable`: `slots` and `remaining` are used only under the lock, as the withdrawer's state is.
@usableFromInline final nonisolated class _Results<Success, Failure: Error>: _Withdrawer, @unchecked Sendable
{
  // `@exclusivity(unchecked)`: accessed only under the lock, never in overlapping accesses.
  @exclusivity(unchecked) @usableFromInline var slots: [Result<Success, Failure>?]
  @exclusivity(unchecked) @usableFromInline var remaining: Int

  @inlinable init(count: Int) {
    slots = Array(repeating: nil, count: count)
    remaining = count
    super.init()
  }

  /// Records one input's result; returns whether it was the last.
  /// Inlinable so that the client specialises it: unspecialised, it ran through generic metadata lookups.
  @inlinable func record(_ result: Result<Success, Failure>, at index: Int) -> Bool {
    _Lock(for: self).withLock {
      slots[index] = result
      remaining -= 1
      return remaining == 0
    }
  }

  /// Every result, in input order, once `record` has returned `true` (no slot changes after that).
  @inlinable var all: [Result<Success, Failure>] { _Lock(for: self).withLock { slots.compactMap { $0 } } }
}

/// The state of `all(_:concurrently:)` and `allSettled(_:concurrently:)`: the makers still to call, how
/// many promises are pending, and every result so far, in the makers' order.
///
/// One thread at a time *pumps*: it calls makers while fewer than `limit` promises are pending. A promise
/// that settles hands its result in and pumps on the thread that settled it — unless another thread (or
/// this one, further up the stack) is pumping already, which then sees the free place on its next turn. So
/// makers settled at once make a loop, not a recursion.
///
/// `@unchecked Sendable`: the makers were handed over (`sending`), so nothing else uses them; `iterator` is
/// used only by the pumping thread, which `isPumping` (set and cleared under the lock) makes one at a time;
/// everything else is read and written under the lock.
@usableFromInline
final nonisolated class _Pump<Makers: Sequence, Success, Failure: Error, NewSuccess, NewFailure: Error>:
  _Withdrawer, @unchecked Sendable
where Makers.Element == () -> ResultPromise<Success, Failure> {
  @usableFromInline var iterator: Makers.Iterator
  @usableFromInline let limit: Int
  /// The combined promise's record, always there: a request stops the pump's work, pending and to come.
  @usableFromInline let record = _Cancellation()
  /// Whether a request stops the pulling (`all`; `allSettled` needs every outcome).
  @usableFromInline let stopsOnRequest: Bool
  @usableFromInline let next: ResultPromise<NewSuccess, NewFailure>
  @usableFromInline let decidedEarly: (Result<Success, Failure>) -> Result<NewSuccess, NewFailure>?
  @usableFromInline let decided: ([Result<Success, Failure>]) -> Result<NewSuccess, NewFailure>
  // `@exclusivity(unchecked)`: accessed only under the lock, never in overlapping accesses.
  @exclusivity(unchecked) @usableFromInline var results: [Result<Success, Failure>?] = []
  @exclusivity(unchecked) @usableFromInline var pending = 0
  @exclusivity(unchecked) @usableFromInline var isPumping = false
  @exclusivity(unchecked) @usableFromInline var isExhausted = false
  @exclusivity(unchecked) @usableFromInline var isDecided = false
  /// After a request: successes handed in in spite of it, each of which allows one more pull.
  @exclusivity(unchecked) @usableFromInline var pullsAllowed = 0

  @inlinable init(
    _ makers: sending Makers, limit: Int, stopsOnRequest: Bool,
    decidedEarly: @escaping (Result<Success, Failure>) -> Result<NewSuccess, NewFailure>?,
    decided: @escaping ([Result<Success, Failure>]) -> Result<NewSuccess, NewFailure>
  ) {
    (iterator, self.limit, self.stopsOnRequest) = (makers.makeIterator(), Swift.max(1, limit), stopsOnRequest)
    next = ResultPromise(_pending: record)
    (self.decidedEarly, self.decided) = (decidedEarly, decided)
    super.init()
  }

  /// Calls the first makers and returns the combined promise.
  @inlinable func start(at file: StaticString, _ line: UInt) -> ResultPromise<NewSuccess, NewFailure> {
    next._made(at: file, line)
    pump()
    return next
  }

  /// Calls makers while places are free, unless another turn of this loop is running.
  @inlinable func pump() {
    let claimed = _Lock(for: self).withLock {
      defer { isPumping = true }
      return !isPumping
    }
    guard claimed else { return }
    while true {
      // After a request, pull only for a success that came in spite of it — or when nothing is in flight,
      // since only a pulled promise's outcome can end the whole then.
      let stopped = stopsOnRequest && record.isCancelled
      // Take a place before pulling, so that a failure recorded meanwhile stops the next pull.
      let index: Int? = _Lock(for: self).withLock {
        guard !isDecided, !isExhausted, pending < limit, !stopped || pullsAllowed > 0 || pending == 0 else {
          isPumping = false
          return nil
        }
        if stopped, pullsAllowed > 0 { pullsAllowed -= 1 }
        pending += 1
        results.append(nil)
        return results.count - 1
      }
      guard let index else { return }
      guard let make = iterator.next() else {
        let outcome = _Lock(for: self).withLock {
          (pending, isExhausted, isPumping) = (pending - 1, true, false)
          results.removeLast()
          return decideIfDone()
        }
        if let outcome { next.fulfil(with: outcome) }
        return
      }
      let promise = make()
      // Let go at once if the combined promise was cancelled.
      record.include(promise._extras, at: promise._depth)
      watch(promise, at: promise._await { result in self.settle(result, at: index) })
    }
  }

  /// Records one promise's result; settles the combined promise if that decides it, else pumps.
  @inlinable func settle(_ result: Result<Success, Failure>, at index: Int) {
    let inSpite = stopsOnRequest && (try? result.get()) != nil && record.isCancelled
    let outcome: Result<NewSuccess, NewFailure>? = _Lock(for: self).withLock {
      guard !isDecided else { return nil }
      (pending, results[index]) = (pending - 1, result)
      if inSpite { pullsAllowed += 1 }
      if let early = decidedEarly(result) {
        isDecided = true
        return early
      }
      return decideIfDone()
    }
    guard let outcome else { return pump() }
    if next.fulfil(with: outcome) { stop() }
  }

  /// The combined outcome once every maker has been called and every promise has settled; called under
  /// the lock.
  @inlinable func decideIfDone() -> Result<NewSuccess, NewFailure>? {
    guard isExhausted, pending == 0, !isDecided else { return nil }
    isDecided = true
    return decided(results.compactMap { $0 })
  }
}
