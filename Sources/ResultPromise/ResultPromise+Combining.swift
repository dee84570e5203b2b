// Combining many promises into one: all, zip, race, any, allSettled — and AggregateError.
//
// Each combinator registers one observer per input and keeps its results in input order, whatever
// order the inputs settle in. Inputs that settle inside each other's observers are delivered through
// the per-thread queue like any other observer, so a million inputs settle in constant stack depth.

/// The failure of ``ResultPromise/any(_:)`` when every input fails: all their errors, in input order.
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
  /// input. Like `Promise.all` in JavaScript and `EventLoopFuture.whenAllSucceed` in swift-nio.
  /// - Parameter promises: The inputs.
  /// - Returns: A promise of all values in input order, or of the first failure.
  @inlinable
  public static func all(
    _ promises: some Collection<ResultPromise<Success, Failure>>
  ) -> ResultPromise<[Success], Failure> {
    _gather(
      promises,
      decidedEarly: { result in
        if case .failure(let error) = result { return .failure(error) }
        return nil
      },
      decided: { results in .success(results.compactMap { try? $0.get() }) })
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
  /// An empty collection succeeds at once with `[]`. Like `Promise.allSettled` in JavaScript.
  /// - Parameter promises: The inputs.
  /// - Returns: A promise of every input's result, in input order.
  @inlinable
  public static func allSettled(
    _ promises: some Collection<ResultPromise<Success, Failure>>
  ) -> ResultPromise<[Result<Success, Failure>], Never> {
    _gather(promises, decidedEarly: { _ in nil }, decided: { .success($0) })
  }

  /// Succeeds with the first input to succeed; if every input fails, fails with all their errors.
  ///
  /// ```swift
  /// ResultPromise.any([cache.load(id), remote.load(id)])
  ///     .onSuccess { user in show(user) }
  ///     .onFailure { aggregate in print(aggregate.errors) }
  /// ```
  ///
  /// An empty collection fails at once with an empty ``AggregateError``. Like `Promise.any` in
  /// JavaScript.
  /// - Parameter promises: The inputs.
  /// - Returns: A promise of the first success, or of every failure in input order.
  @inlinable
  public static func any(
    _ promises: some Collection<ResultPromise<Success, Failure>>
  ) -> ResultPromise<Success, AggregateError<Failure>> {
    _gather(
      promises,
      decidedEarly: { result in
        if case .success(let value) = result { return .success(value) }
        return nil
      },
      decided: { results in
        .failure(
          AggregateError(
            errors: results.compactMap {
              if case .failure(let error) = $0 { return error }
              return nil
            }))
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
  /// Later inputs' results are ignored.
  /// - Parameter promises: The inputs.
  /// - Returns: A promise that settles like the first input to settle.
  @inlinable
  public static func race(
    _ promises: some Collection<ResultPromise<Success, Failure>>
  ) -> ResultPromise<Success, Failure> {
    let next = ResultPromise<Success, Failure>._pending()
    for promise in promises { promise._await { next.fulfil(with: $0) } }
    return next
  }

  /// Watches every input; settles early with `decidedEarly`'s answer, else with `decided`'s once all
  /// inputs have settled (a no-op if it already settled early).
  @inlinable static func _gather<NewSuccess, NewFailure>(
    _ promises: some Collection<ResultPromise<Success, Failure>>,
    decidedEarly: @escaping (Result<Success, Failure>) -> Result<NewSuccess, NewFailure>?,
    decided: @escaping ([Result<Success, Failure>]) -> Result<NewSuccess, NewFailure>
  ) -> ResultPromise<NewSuccess, NewFailure> {
    let next = ResultPromise<NewSuccess, NewFailure>._pending()
    guard !promises.isEmpty else {
      next.fulfil(with: decided([]))
      return next
    }
    let results = _Results<Success, Failure>(count: promises.count)
    for (index, promise) in promises.enumerated() {
      promise._await { result in
        if let early = decidedEarly(result) { next.fulfil(with: early) }
        if let all = results.record(result, at: index) { next.fulfil(with: decided(all)) }
      }
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
  /// With no arguments it succeeds at once with `()`. (`zip` lives where `Success == Never` so that
  /// `ResultPromise.zip(…)` needs no generic arguments, as `Task.sleep` lives on `Task<Never, Never>`.)
  /// - Parameter promise: The inputs, all with the same `Failure`.
  /// - Returns: A promise of the tuple of values, or of the first failure.
  @inlinable
  public static func zip<each Value>(
    _ promise: repeat ResultPromise<each Value, Failure>
  ) -> ResultPromise<(repeat each Value), Failure> {
    let next = ResultPromise<(repeat each Value), Failure>._pending()
    // Each input's value goes to a slot of its own: the observers hold the slots, never the inputs, so
    // an input nobody else holds is released (and reported, if user-made) while the others wait.
    let slots = (repeat _Slot<each Value>())
    var count = 0
    for _ in repeat each promise { count += 1 }
    let remaining = _Results<Void, Failure>(count: count)
    guard count > 0 else {
      next.fulfil(with: .success((repeat (each slots).value)))
      return next
    }
    var index = 0
    for (input, slot) in repeat (each promise, each slots) {
      let position = index
      index += 1
      input._await { result in
        switch result {
        case .failure(let error): next.fulfil(with: .failure(error))
        case .success(let value):
          slot.stored = value
          if remaining.record(.success(()), at: position) != nil {
            next.fulfil(with: .success((repeat (each slots).value)))
          }
        }
      }
    }
    return next
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

/// The results a combinator has seen so far, in input order.
@usableFromInline final nonisolated class _Results<Success, Failure: Error> {
  // `@exclusivity(unchecked)`: accessed only under the lock, never in overlapping accesses.
  @exclusivity(unchecked) @usableFromInline var slots: [Result<Success, Failure>?]
  @exclusivity(unchecked) @usableFromInline var remaining: Int

  @inlinable init(count: Int) {
    slots = Array(repeating: nil, count: count)
    remaining = count
  }

  /// Records one input's result; returns every result, in input order, when the last one arrives.
  /// Inlinable so that the client specialises it: unspecialised, it ran through generic metadata lookups.
  @inlinable func record(_ result: Result<Success, Failure>, at index: Int) -> [Result<
    Success, Failure
  >]? {
    _Lock(for: self).withLock {
      slots[index] = result
      remaining -= 1
      return remaining == 0 ? slots.compactMap { $0 } : nil
    }
  }
}
