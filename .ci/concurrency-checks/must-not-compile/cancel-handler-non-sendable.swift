// expect: capture of 'model' with non-Sendable type 'Model' in a '@Sendable' closure
// A cancel handler runs on whichever thread asks: it may not capture a non-Sendable object.
import ResultPromise

func stoppable(_ model: Model) -> ResultPromise<Int, ModelError> {
  ResultPromise { done, onCancel in
    onCancel { model.name = "stopped" }
    done(.success(1))
  }
}
