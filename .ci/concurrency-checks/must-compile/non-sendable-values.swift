// The sound ways to use a promise of a non-Sendable value: settle it with `done` (which takes the value
// `sending`) or in its own isolation domain; handle its failure, combine it and pass it on from anywhere;
// and see its value on the main actor, through onMainActor.
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

func fallback() -> ResultPromise<Model, ModelError> {
  loadModel().mapError { _ in .missing }.recover { _ in .success(Model()) }.onFailure { _ in }
}

func both() -> ResultPromise<[Model], ModelError> {
  ResultPromise.all([loadModel(), fallback()])
}

@MainActor func names() -> ResultPromise<String, ModelError> {
  both().onMainActor.map { models in models.map(\.name).joined(separator: ", ") }.promise
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

// Work that can be stopped, for a non-Sendable value: the `sending` form, chosen by the closure's arity.
func stoppableModel() -> ResultPromise<Model, ModelError> {
  ResultPromise { done, onCancel in
    let queue = DispatchQueue(label: "parse")
    onCancel { queue.async { done(.failure(.missing)) } }
    queue.async { done(.success(Model())) }
  }
}

@MainActor final class CancellingViewModel {
  var loading: MainActorPromise<String, ModelError>?

  func show() {
    loading?.cancel()
    loading = stoppableModel().onMainActor.map { $0.name }
  }

  func stop() async {
    let task = Task { await stoppableModel().onMainActor.map { $0.name }.result }
    task.cancel()
    _ = await task.value
  }
}

// A registry of non-Sendable values, kept in one isolation domain: every caller is on the main actor.
@MainActor final class Models {
  let registry = SharedWork<Int, Model, ModelError>()

  func model(_ id: Int) -> ResultPromise<Model, ModelError> {
    registry.promise(for: id, leaving: .missing) { _ in loadModel() }
  }
}
