// expect: type 'Model' does not conform to the 'Sendable' protocol
// A plain step would hand the model to the settling thread while a main-actor observer of the same
// promise may use it at the same time: two threads, one object. Steps on such values use onMainActor.
import ResultPromise

@MainActor func observeTwice(_ promise: ResultPromise<Model, ModelError>) {
  promise.map { $0 }.onMainActor.await { _ in }
  promise.onMainActor.await { result in _ = try? result.get().name }
}
