// expect: main actor-isolated property 'title' can not be mutated from a Sendable closure
// The thread-safe API's callbacks are @Sendable and may run on any thread; main-actor code uses onMainActor.
import Dispatch
import ResultPromise

@MainActor final class ViewModel {
  var title = ""
  func load(_ promise: ResultPromise<String, ModelError>) {
    promise.onSuccess { name in self.title = name }
  }
}
