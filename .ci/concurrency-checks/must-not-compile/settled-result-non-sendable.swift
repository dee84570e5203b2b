// expect: type 'Model' does not conform to the 'Sendable' protocol
// settledResult hands the value to whichever thread reads it: for a value that is not Sendable, only the
// main-actor view offers it.
import ResultPromise

func peek(_ promise: ResultPromise<Model, ModelError>) {
  _ = promise.settledResult
}
