import Dispatch
import ResultPromise
import Testing

// Uses the library the way app code does, from `@MainActor`: chain on the main actor, or await.
// This file compiles in Swift 6 mode with complete checking and no warnings; that is half the test.

/// A service with a completion-handler API, as apps have.
struct ProfileService: Sendable {
  func fetchName(id: Int, completion: @escaping @Sendable (Result<String, TestError>) -> Void) {
    DispatchQueue.global().async { completion(id > 0 ? .success("ada") : .failure(.other(id))) }
  }

  func name(id: Int) -> ResultPromise<String, TestError> {
    ResultPromise { done in fetchName(id: id, completion: done) }
  }
}

/// A main-actor view model, as apps have.
@MainActor final class ProfileViewModel {
  let service = ProfileService()
  var title = ""
  var isLoading = false

  /// async/await style: chain, then await the value on the main actor.
  func load(id: Int) async {
    isLoading = true
    defer { isLoading = false }
    do throws(AppError) {
      title = try await service.name(id: id).map { $0.capitalized }.mapError { AppError.wrapped($0) }.value
    } catch {
      title = "Failed: \(error)"
    }
  }

  /// Callback style: the chain's closures run on the main actor and touch its state directly.
  func loadWithCallbacks(id: Int, done: @escaping @MainActor () -> Void) {
    isLoading = true
    service.name(id: id).onMainActor
      .map { $0.uppercased() }
      .always { result in
        self.isLoading = false
        self.title = (try? result.get()) ?? "Failed"
        done()
      }
  }
}

@Suite("Use from @MainActor app code")
@MainActor struct MainActorUsageTests {
  @Test("a main-actor view model awaits a chained promise and updates its state")
  func awaitFromMainActor() async {
    let model = ProfileViewModel()
    await model.load(id: 1)
    #expect(model.title == "Ada")
    await model.load(id: -2)
    #expect(model.title == "Failed: wrapped(ResultPromiseTests.TestError.other(-2))")
    #expect(!model.isLoading)
  }

  @Test("a main-actor view model chains on the main actor and updates its state in the closures")
  func callbacksOnMainQueue() async {
    let model = ProfileViewModel()
    await withCheckedContinuation { continuation in
      model.loadWithCallbacks(id: 1) { continuation.resume() }
    }
    #expect(model.title == "ADA")
    #expect(!model.isLoading)
  }
}
