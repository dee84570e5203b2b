// expect: type 'Model' does not conform to the 'Sendable' protocol
// receive(on:) moves the value to the queue's thread.
import Dispatch
import ResultPromise

func deliverOnQueue(_ promise: ResultPromise<Model, ModelError>) {
  _ = promise.receive(on: .main)
}
