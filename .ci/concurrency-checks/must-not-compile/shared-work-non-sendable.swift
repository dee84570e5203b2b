// expect: capture of 'registry' with non-Sendable type 'SharedWork<Int, Model, ModelError>' in a '@Sendable' closure
// A registry hands one run's value to every caller: of a non-Sendable value, it stays in one isolation domain,
// so a caller on another thread would share the model object with the callers here.
import Dispatch
import ResultPromise

func share(_ registry: SharedWork<Int, Model, ModelError>) {
  DispatchQueue.global().async {
    _ = registry.promise(for: 1, leaving: .missing) { _ in ResultPromise(value: Model()) }
  }
}
