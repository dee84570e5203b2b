import Dispatch
import ResultPromise
import Testing

/// The core API, one behaviour per test (`Sources/ResultPromise/ResultPromise.swift`).
@Suite("ResultPromise core API")
struct ResultPromiseTests {
  /// Returns a pending promise and settles it from a background queue after a short pause.
  func later<S: Sendable, F: Error>(_ result: Result<S, F>) -> ResultPromise<S, F> {
    ResultPromise { fulfil in
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) { fulfil(result) }
    }
  }

  /// Waits for `promise` from a test by bridging its observer to a continuation.
  func outcome<S: Sendable, F: Error>(of promise: ResultPromise<S, F>) async -> Result<S, F> {
    await withCheckedContinuation { continuation in promise.await { continuation.resume(returning: $0) } }
  }

  @Test("init() creates a pending promise")
  func initCreatesPending() {
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.isPending)
  }

  @Test("init(value:), init(error:) and init(_:) create settled promises")
  func settledInitialisers() {
    let results = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 1).await(results.append)
    ResultPromise<Int, TestError>(error: .boom).await(results.append)
    ResultPromise<Int, TestError>(.success(3)).await(results.append)
    #expect(results.values == [.success(1), .failure(.boom), .success(3)])
    #expect(!ResultPromise<Int, TestError>(value: 1).isPending)
  }

  @Test("init(_ start:) runs start at once and settles when the completion handler is called")
  func wrapsCompletionHandler() async {
    let started = Counter()
    let promise = ResultPromise<String, TestError> { fulfil in
      started.increment()
      DispatchQueue.global().async { fulfil(.success("loaded")) }
    }
    #expect(started.value == 1)
    #expect(await outcome(of: promise) == .success("loaded"))
  }

  @Test("fulfil(with:) returns true the first time and false afterwards, keeping the first result")
  func fulfilOnce() {
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.fulfil(with: .success(1)))
    #expect(!promise.fulfil(with: .success(2)))
    #expect(!promise.fulfil(with: .failure(.boom)))
    let results = Log<Result<Int, TestError>>()
    promise.await(results.append)
    #expect(results.values == [.success(1)])
  }

  @Test("succeed, fail and succeed() settle like fulfil(with:)")
  func shorthands() {
    let value = ResultPromise<Int, TestError>()
    #expect(value.succeed(5))
    #expect(!value.fail(.boom))
    let error = ResultPromise<Int, TestError>()
    #expect(error.fail(.boom))
    #expect(!error.succeed(1))
    let void = ResultPromise<Void, TestError>()
    #expect(void.succeed())
    #expect(!void.isPending)
    let results = Log<Result<Int, TestError>>()
    value.await(results.append)
    error.await(results.append)
    #expect(results.values == [.success(5), .failure(.boom)])
  }

  @Test("isPending turns false once the promise settles")
  func isPendingFlips() {
    let promise = ResultPromise<Int, TestError>()
    #expect(promise.isPending)
    promise.succeed(1)
    #expect(!promise.isPending)
  }

  @Test("then runs its step on success and passes a failure past it")
  func thenStep() {
    let results = Log<Result<String, TestError>>()
    let calls = Counter()
    let step: @Sendable (Int) -> Result<String, TestError> = {
      calls.increment()
      return $0 > 0 ? .success("n\($0)") : .failure(.other($0))
    }
    ResultPromise<Int, TestError>(value: 2).then(step).await(results.append)
    ResultPromise<Int, TestError>(value: -1).then(step).await(results.append)
    ResultPromise<Int, TestError>(error: .boom).then(step).await(results.append)
    #expect(results.values == [.success("n2"), .failure(.other(-1)), .failure(.boom)])
    #expect(calls.value == 2)
  }

  @Test("thenAsync adopts a promise that settles later on another thread")
  func thenAsyncAdoptsLaterPromise() async {
    let inner = ResultPromise<Int, TestError>()
    let promise = ResultPromise<Int, TestError>(value: 20).thenAsync { _ in inner }
    #expect(promise.isPending)
    DispatchQueue.global().async { inner.succeed(21) }
    #expect(await outcome(of: promise) == .success(21))
  }

  @Test("thenAsync adopts a settled promise at once, failures included")
  func thenAsyncAdoptsSettledPromise() {
    let results = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 1).thenAsync { ResultPromise(value: $0 * 10) }.await(results.append)
    ResultPromise<Int, TestError>(value: 1).thenAsync { _ in ResultPromise<Int, TestError>(error: .other(7)) }
      .await(results.append)
    #expect(results.values == [.success(10), .failure(.other(7))])
  }

  @Test("thenAsync does not call its step after a failure")
  func thenAsyncSkippedOnFailure() {
    let calls = Counter()
    let results = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(error: .boom)
      .thenAsync { value -> ResultPromise<Int, TestError> in
        calls.increment()
        return ResultPromise(value: value)
      }
      .await(results.append)
    #expect(results.values == [.failure(.boom)])
    #expect(calls.value == 0)
  }

  @Test("map transforms the value and passes a failure past it")
  func mapStep() {
    let results = Log<Result<Int, TestError>>()
    ResultPromise<Int, TestError>(value: 4).map { $0 * 2 }.await(results.append)
    ResultPromise<Int, TestError>(error: .boom).map { $0 * 2 }.await(results.append)
    #expect(results.values == [.success(8), .failure(.boom)])
  }

  @Test("map with a typed-throws closure turns a thrown error into a failure")
  func mapTypedThrows() {
    let results = Log<Result<Int, TestError>>()
    let parse: @Sendable (String) throws(TestError) -> Int = { text throws(TestError) in
      guard let number = Int(text) else { throw .other(text.count) }
      return number
    }
    ResultPromise<String, TestError>(value: "12").map(parse).await(results.append)
    ResultPromise<String, TestError>(value: "abc").map(parse).await(results.append)
    #expect(results.values == [.success(12), .failure(.other(3))])
  }

  @Test("mapError changes the failure type and passes a success unchanged")
  func mapErrorStep() {
    let results = Log<Result<Int, AppError>>()
    ResultPromise<Int, TestError>(error: .boom).mapError { AppError.wrapped($0) }.await(results.append)
    ResultPromise<Int, TestError>(value: 3).mapError { AppError.wrapped($0) }.await(results.append)
    #expect(results.values == [.failure(.wrapped(.boom)), .success(3)])
  }

  @Test("recover turns a failure into a success or a new failure and passes a success unchanged")
  func recoverStep() {
    let results = Log<Result<Int, AppError>>()
    ResultPromise<Int, TestError>(error: .boom).recover { _ in .success(0) }.await(results.append)
    ResultPromise<Int, TestError>(error: .other(1)).recover { .failure(.wrapped($0)) }.await(results.append)
    ResultPromise<Int, TestError>(value: 9).recover { _ in .success(0) }.await(results.append)
    #expect(results.values == [.success(0), .failure(.wrapped(.other(1))), .success(9)])
  }

  @Test("recoverAsync adopts the recovery promise, also one that settles later")
  func recoverAsyncStep() async {
    let recovered = ResultPromise<Int, TestError>(error: .boom)
      .recoverAsync { _ in self.later(Result<Int, AppError>.success(42)) }
    #expect(await outcome(of: recovered) == .success(42))
    let passed = ResultPromise<Int, TestError>(value: 1)
      .recoverAsync { _ in ResultPromise<Int, AppError>(error: .offline) }
    #expect(await outcome(of: passed) == .success(1))
  }

  @Test("every operator takes a function reference or a stored closure, on pending and on settled promises")
  func functionReferencesAndStoredClosures() {
    // The operators take their closures `__owned`: each must be moved into its step (or into the call that
    // runs it at once) exactly once, also when Swift makes a thunk for a function reference.
    @Sendable func double(_ value: Int) -> Int { value * 2 }
    @Sendable func half(_ value: Int) -> Result<Int, TestError> { .success(value / 2) }
    @Sendable func adopt(_ value: Int) -> ResultPromise<Int, TestError> { ResultPromise(value: value + 1) }
    @Sendable func rescue(_ error: TestError) -> Result<Int, TestError> { .success(-1) }
    @Sendable func rescueLater(_ error: TestError) -> ResultPromise<Int, TestError> {
      ResultPromise(value: -2)
    }
    @Sendable func wrap(_ error: TestError) -> AppError { .wrapped(error) }
    let addThree: @Sendable (Int) -> Int = { $0 + 3 }
    for pending in [true, false] {
      let results = Log<Result<Int, AppError>>()
      let value = pending ? ResultPromise<Int, TestError>() : ResultPromise(value: 8)
      let failure = pending ? ResultPromise<Int, TestError>() : ResultPromise(error: .boom)
      value.map(double).then(half).thenAsync(adopt).map(addThree).mapError(wrap).await(results.append)
      failure.recover(rescue).map(addThree).mapError(wrap).await(results.append)
      failure.recoverAsync(rescueLater).map(addThree).map(addThree).mapError(wrap).await(results.append)
      value.succeed(8)
      failure.fail(.boom)
      #expect(results.values == [.success(12), .success(2), .success(4)], "pending: \(pending)")
    }
  }

  @Test("the DESIGN.md semantics-11 chains type-check without annotations")
  func pleasantChains() {
    func load() -> ResultPromise<Int, TestError> { ResultPromise(value: 1) }
    let results = Log<Result<String, AppError>>()
    load().then { .success($0 + 1) }.map { $0 * 2 }.mapError { _ in AppError.offline }.map { "\($0)" }
      .await(results.append)
    load().then { .success($0 + 1) }.recover { _ in Result<Int, AppError>.success(0) }.map { $0 * 2 }
      .map { "\($0)" }.await(results.append)
    #expect(results.values == [.success("4"), .success("4")])
  }

  @Test("a promise of a non-Sendable value is settled from another thread through the sending fulfil")
  @MainActor func nonSendableValueThroughSendingFulfil() async {
    let promise = ResultPromise<Model, TestError> { done in
      DispatchQueue.global().async {
        let model = Model(name: "ada")
        model.revisions = 2
        done(.success(model))
      }
    }
    let summary = promise.onMainActor.map { model in "\(model.name) r\(model.revisions)" }.promise
    #expect(await outcome(of: summary) == .success("ada r2"))
  }
}
