// expect: type 'Model' does not conform to the 'Sendable' protocol
// delay moves the value to a global queue.
import Dispatch
import ResultPromise

func postpone(_ promise: ResultPromise<Model, ModelError>) {
  _ = promise.delay(.milliseconds(10))
}
