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
    #expect(logged.values == [.boom])
    #expect(outcome.values == [.success(0)])
  }
}
