// expect: type 'Model' does not conform to the 'Sendable' protocol
// `value` hands the result to another task; main-actor code uses `onMainActor.value`.
import Dispatch
import ResultPromise

func read(_ promise: ResultPromise<Model, ModelError>) async throws {
  _ = try await promise.value
}
