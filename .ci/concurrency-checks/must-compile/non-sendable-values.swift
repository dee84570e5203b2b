// The sound ways to use a promise of a non-Sendable value: settle it with `done` (which takes the value
// `sending`) or in its own isolation domain, chain it with @Sendable steps, and use it from the main actor.
import Dispatch
import ResultPromise

func loadModel() -> ResultPromise<Model, ModelError> {
  ResultPromise { done in
    DispatchQueue.global().async {
      let model = Model()
      model.name = "made here, then handed over"
      done(.success(model))
    }
  }
}

func names() -> ResultPromise<String, ModelError> {
  loadModel().map { model in model.name }.recover { _ in .success("unknown") }
}

@MainActor final class ViewModel {
  var title = ""
  let context = Model()  // a non-Sendable object, captured below

  func load() {
    let context = self.context
    loadModel().onMainActor
      .map { model -> String in
        context.name = model.name
        return model.name
      }
      .await { result in self.title = (try? result.get()) ?? "failed" }
  }

  func awaitIt() async throws(ModelError) -> String {
    try await loadModel().onMainActor.value.name
  }
}
