import ResultPromise
import Testing

/// Semantics 8: typed errors without traps — a custom enum, a `mapError` across types, `Never`, and
/// `any Error`.
@Suite("Typed errors")
struct TypedErrorTests {
  enum StoreError: Error, Equatable {
    case notFound(id: Int)
    case corrupt
  }

  enum ScreenError: Error, Equatable {
    case message(String)
  }

  func load(_ id: Int) -> ResultPromise<String, StoreError> {
    id == 1 ? ResultPromise(value: "Ada") : ResultPromise(error: .notFound(id: id))
  }

  @Test("a custom error enum reaches the failure handler with its associated value intact")
  func customErrorEnum() {
    let results = Log<Result<Int, StoreError>>()
    load(7).map(\.count).then { .success($0 + 1) }.await(results.append)
    #expect(results.values == [.failure(.notFound(id: 7))])
  }

  @Test("mapError converts between error types at a layer boundary")
  func mapErrorAcrossLayers() {
    let results = Log<Result<String, ScreenError>>()
    load(3).mapError { error -> ScreenError in
      switch error {
      case .notFound(let id): .message("No user \(id)")
      case .corrupt: .message("Try again")
      }
    }.await(results.append)
    #expect(results.values == [.failure(.message("No user 3"))])
  }

  @Test("a promise whose Failure is Never can only succeed, and recover can produce one")
  func neverFailure() {
    let values = Log<Int>()
    let never: ResultPromise<Int, Never> = load(9).map(\.count).recover { _ in .success(-1) }
    never.await { result in
      switch result {
      case .success(let value): values.append(value)
      }
    }
    ResultPromise<Int, Never>(value: 3).map { $0 * 2 }.then { .success($0 + 1) }.await { result in
      if case .success(let value) = result { values.append(value) }
    }
    #expect(values.values == [-1, 7])
  }

  @Test("any Error works as Failure, and a typed-throws map can throw into it")
  func anyErrorFailure() {
    let outcome = Log<String>()
    let parse: @Sendable (String) throws(any Error) -> Int = { text in
      guard let number = Int(text) else { throw StoreError.corrupt }
      return number
    }
    ResultPromise<String, any Error>(value: "x").map(parse).await { result in
      if case .failure(let error) = result, let store = error as? StoreError { outcome.append("\(store)") }
    }
    #expect(outcome.values == ["corrupt"])
  }

  @Test("recover keeps the error type when a multi-statement closure does not name one")
  func recoverKeepsErrorType() {
    let logged = Log<TestError>()
    let outcome = Log<Result<Int, TestError>>()
    let recovered = ResultPromise<Int, TestError>(error: .boom).recover { error in
      logged.append(error)
      return .success(0)
    }
    #expect(staticType(of: recovered) == ResultPromise<Int, TestError>.self)
    recovered.await(outcome.append)
    // Naming another error type still changes it, as before.
    let changed = ResultPromise<Int, TestError>(error: .boom).recover { _ in
      Result<Int, AppError>.failure(.offline)
    }
    #expect(staticType(of: changed) == ResultPromise<Int, AppError>.self)
    #expect(changed.settledResult == .failure(.offline))
    #expect(logged.values == [.boom])
    #expect(outcome.values == [.success(0)])
  }

  @Test("recoverAsync keeps the error type when its closure does not name one, in one expression or many")
  func recoverAsyncKeepsErrorType() async {
    let failed = ResultPromise<Int, TestError>(error: .boom)
    let fallback = failed.recoverAsync { _ in ResultPromise(value: 1) }
    #expect(staticType(of: fallback) == ResultPromise<Int, TestError>.self)
    let logged = Log<TestError>()
    let logging = failed.recoverAsync { error in
      logged.append(error)
      return ResultPromise(error: .other(2))
    }
    #expect(staticType(of: logging) == ResultPromise<Int, TestError>.self)
    // Naming another error type still changes it.
    let changed = failed.recoverAsync { _ in ResultPromise<Int, AppError>(error: .offline) }
    #expect(staticType(of: changed) == ResultPromise<Int, AppError>.self)
    #expect(await fallback.result == .success(1))
    #expect(await logging.result == .failure(.other(2)))
    #expect(await changed.result == .failure(.offline))
    #expect(logged.values == [.boom])
  }

  @Test("on the main actor too, recoverAsync keeps the error type when its closure does not name one")
  @MainActor func mainActorRecoverAsyncKeepsErrorType() async {
    let failed = ResultPromise<Model, TestError>(error: .boom).onMainActor
    let fallback = failed.recoverAsync { _ in ResultPromise(value: Model(name: "placeholder")) }
    #expect(staticType(of: fallback) == MainActorPromise<Model, TestError>.self)
    var logged: [TestError] = []
    let logging = failed.recoverAsync { error in
      logged.append(error)
      return ResultPromise(error: .other(3))
    }
    #expect(staticType(of: logging) == MainActorPromise<Model, TestError>.self)
    #expect(await fallback.map(\.name).result == .success("placeholder"))
    #expect(await logging.map(\.name).result == .failure(.other(3)))
    #expect(logged == [.boom])
  }

  @Test(
    "a trailing closure is never taken for init(value:)'s value: ResultPromise { done in … } wraps a handler")
  func trailingClosureIsNeverAValue() {
    let wrapped = ResultPromise { done in done(Result<Int, TestError>.success(5)) }
    #expect(staticType(of: wrapped) == ResultPromise<Int, TestError>.self)
    let results = Log<Result<Int, TestError>>()
    wrapped.await(results.append)
    #expect(results.values == [.success(5)])
  }
}
