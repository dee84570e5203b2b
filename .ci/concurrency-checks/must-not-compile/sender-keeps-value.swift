// expect: risks causing data races
// fulfil takes the result `sending`: a sender that keeps using the value after handing it over is rejected.
import Dispatch
import ResultPromise

func sendAndKeep() -> ResultPromise<Model, ModelError> {
  ResultPromise { done in
    DispatchQueue.global().async {
      let model = Model()
      done(.success(model))
      model.name = "changed after it was handed over"
    }
  }
}
