import Dispatch
import ResultPromise
import Testing

/// Stand-ins for the callback shapes of older SDKs; each calls back on a global queue, as such APIs do.
private enum OldSDK {
  static func optionalValue(
    _ value: Int?, _ error: (any Error)?, completion: @escaping @Sendable (Int?, (any Error)?) -> Void
  ) {
    DispatchQueue.global().async { completion(value, error) }
  }
  static func plainValue(
    _ value: Bool, _ error: (any Error)?, completion: @escaping @Sendable (Bool, (any Error)?) -> Void
  ) {
    DispatchQueue.global().async { completion(value, error) }
  }
  static func errorOnly(_ error: (any Error)?, completion: @escaping @Sendable ((any Error)?) -> Void) {
    DispatchQueue.global().async { completion(error) }
  }
}

private struct SDKError: Error, Equatable {}

/// How the tests map what the handlers report, as an app maps an SDK's errors into its own type.
private func mapped(_ error: any Error) -> AppError {
  error is SDKError ? .wrapped(.boom) : .wrapped(.other(0))
}

@Suite("Completion handlers: (Value?, Error?), (Value, Error?), (Error?)")
struct CompletionHandlersTests {
  @Test(
    "(Value?, Error?): a value succeeds, an error fails through mapError, neither fails with mapError(nil)")
  func optionalValueAndError() async {
    // `nil` stands for a handler called with neither a value nor an error.
    let map: @Sendable ((any Error)?) -> AppError = { $0.map(mapped) ?? .offline }
    let value = ResultPromise { done in
      OldSDK.optionalValue(3, nil, completion: done)
    } mapError: {
      map($0)
    }
    let error = ResultPromise { done in
      OldSDK.optionalValue(nil, SDKError(), completion: done)
    } mapError: {
      map($0)
    }
    let both = ResultPromise { done in
      OldSDK.optionalValue(4, SDKError(), completion: done)
    } mapError: {
      map($0)
    }
    let neither = ResultPromise { done in
      OldSDK.optionalValue(nil, nil, completion: done)
    } mapError: { error in
      error.map(mapped) ?? .offline
    }
    #expect(staticType(of: value) == ResultPromise<Int, AppError>.self)
    #expect(await value.result == .success(3))
    #expect(await error.result == .failure(.wrapped(.boom)))
    #expect(await both.result == .failure(.wrapped(.boom)), "an error wins over a value")
    #expect(await neither.result == .failure(.offline))
  }

  @Test("(Value?, Error?) with a mapError of a non-optional error keeps the optional value as the success")
  func optionalValueWithNonOptionalMapping() async {
    let neither = ResultPromise { done in
      OldSDK.optionalValue(nil, nil, completion: done)
    } mapError: {
      mapped($0)
    }
    #expect(staticType(of: neither) == ResultPromise<Int?, AppError>.self)
    #expect(await neither.result == .success(nil))
  }

  @Test("(Value, Error?): no error succeeds with the value, an error fails and the value is dropped")
  func valueAndOptionalError() async {
    let granted = ResultPromise { done in
      OldSDK.plainValue(true, nil, completion: done)
    } mapError: {
      mapped($0)
    }
    let failed = ResultPromise { done in
      OldSDK.plainValue(true, SDKError(), completion: done)
    } mapError: {
      mapped($0)
    }
    #expect(staticType(of: granted) == ResultPromise<Bool, AppError>.self)
    #expect(await granted.result == .success(true))
    #expect(await failed.result == .failure(.wrapped(.boom)))
  }

  @Test("(Error?): nil succeeds with Void, an error fails through mapError")
  func errorOnly() async {
    let succeeded = ResultPromise { done in
      OldSDK.errorOnly(nil, completion: done)
    } mapError: {
      mapped($0)
    }
    let failed = ResultPromise { done in
      OldSDK.errorOnly(SDKError(), completion: done)
    } mapError: {
      mapped($0)
    }
    #expect(staticType(of: succeeded) == ResultPromise<Void, AppError>.self)
    #expect(await succeeded.result.map { "done" } == .success("done"))
    #expect(await failed.result.map { "done" } == .failure(.wrapped(.boom)))
  }

  @Test("with Failure == any Error, mapError is the identity and the error arrives as it was")
  func anyError() async {
    let failed = ResultPromise { done in
      OldSDK.plainValue(false, SDKError(), completion: done)
    } mapError: {
      $0
    }
    #expect(staticType(of: failed) == ResultPromise<Bool, any Error>.self)
    guard case .failure(let error) = await failed.result else {
      Issue.record("expected a failure")
      return
    }
    #expect(error is SDKError)
  }

  @Test("only the first call of a completion counts, and one released uncalled while pending is reported")
  func firstCallCountsAndReleaseIsReported() {
    BrokenPromiseReports.install()
    let twice = ResultPromise { (done: @escaping @Sendable (Int, (any Error)?) -> Void) in
      done(1, nil)
      done(2, nil)
    } mapError: {
      mapped($0)
    }
    #expect(twice.settledResult == .success(1))
    struct UnansweredHandlerSentinel: Sendable {}
    let waiting = ResultPromise<UnansweredHandlerSentinel, AppError> {
      (_: @escaping @Sendable (UnansweredHandlerSentinel, (any Error)?) -> Void) in
    } mapError: {
      mapped($0)
    }
    waiting.await { _ in }
    #expect(BrokenPromiseReports.mentioning("UnansweredHandlerSentinel").values.reduce(0, +) == 1)
  }

  @Test(
    "each shape has a cancellable form: a request runs its handler, and the handler's error comes back mapped"
  )
  func cancellableForms() {
    /// An old SDK's call that can be stopped: stopping calls back with `SDKError`, as URLSession reports
    /// `URLError.cancelled`.
    final class Call: Sendable {
      let stops = Counter()
      let completion = Locked<(@Sendable ((any Error)?) -> Void)?>(nil)
      func stop() {
        stops.increment()
        completion.withLock { $0 }?(SDKError())
      }
    }
    let optional = Call()
    let optionalValue = ResultPromise { (done: @escaping @Sendable (Int?, (any Error)?) -> Void, onCancel) in
      optional.completion.withLock { $0 = { done(nil, $0) } }
      onCancel { optional.stop() }
    } mapError: {
      $0.map(mapped) ?? .offline
    }
    let plain = Call()
    let plainValue = ResultPromise { (done: @escaping @Sendable (Bool, (any Error)?) -> Void, onCancel) in
      plain.completion.withLock { $0 = { done(false, $0) } }
      onCancel { plain.stop() }
    } mapError: {
      mapped($0)
    }
    let errorOnly = Call()
    let noValue = ResultPromise { (done: @escaping @Sendable ((any Error)?) -> Void, onCancel) in
      errorOnly.completion.withLock { $0 = done }
      onCancel { errorOnly.stop() }
    } mapError: {
      mapped($0)
    }
    #expect(staticType(of: optionalValue) == ResultPromise<Int, AppError>.self)
    #expect(staticType(of: plainValue) == ResultPromise<Bool, AppError>.self)
    #expect(staticType(of: noValue) == ResultPromise<Void, AppError>.self)
    let tail = ResultPromise<Int, AppError>(value: 1).thenAsync { _ in optionalValue }  // a step adopts it
    tail.cancel()
    plainValue.map { !$0 }.cancel()
    noValue.cancel()
    #expect([optional, plain, errorOnly].map(\.stops.value) == [1, 1, 1])
    #expect(tail.settledResult == .failure(.wrapped(.boom)))
    #expect(plainValue.settledResult == .failure(.wrapped(.boom)))
    if case .failure(let error) = noValue.settledResult {
      #expect(error == .wrapped(.boom))
    } else {
      Issue.record()
    }
  }

  @Test("a cancellable form's handler never runs once the completion has been called")
  func cancellableFormSettledFirst() async {
    let stops = Counter()
    let finished = ResultPromise { done, onCancel in
      OldSDK.errorOnly(nil, completion: done)
      onCancel { stops.increment() }
    } mapError: {
      mapped($0)
    }
    _ = await finished.result
    finished.cancel()
    #expect(stops.value == 0)
  }
}
