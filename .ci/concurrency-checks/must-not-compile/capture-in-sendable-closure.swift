// expect: capture of 'promise' with non-Sendable type 'ResultPromise<Model, ModelError>'
// A promise of a non-Sendable value cannot be captured by a @Sendable closure and settled elsewhere.
import Dispatch
import ResultPromise

func settleElsewhere() {
  let promise = ResultPromise<Model, ModelError>()
  DispatchQueue.global().async { promise.succeed(Model()) }
}
