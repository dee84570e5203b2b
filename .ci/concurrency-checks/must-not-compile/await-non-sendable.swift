// expect: type 'Model' does not conform to the 'Sendable' protocol
// Observing a non-Sendable value with a @Sendable callback, which runs on the settling thread.
import ResultPromise

func observe(_ promise: ResultPromise<Model, ModelError>) {
  promise.await { result in _ = try? result.get().name }
}
