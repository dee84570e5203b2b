// expect: type 'Model' does not conform to the 'Sendable' protocol
// A combinator of non-Sendable values observed by a @Sendable callback: it would run on the thread that
// settles `remote`, while the main actor still uses `local`'s model. Observe it with onMainActor instead.
import Dispatch
import ResultPromise

@MainActor final class ViewModel {
  let model = Model()
  func refresh() {
    let local = ResultPromise<Model, Never>(value: model)
    let remote = ResultPromise<Model, Never> { done in DispatchQueue.global().async { done(.success(Model())) } }
    ResultPromise.all([local, remote]).onSuccess { models in models[0].name += "!" }
  }
}
