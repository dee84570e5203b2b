// The core and the cancellation file (`Scripts/vendor --with Cancellation`): work that stops when asked, a
// request from the end of a chain, and one from a chain that starts at a value and adopts the work.
// Expect: cancellation: a chain's work cancelled
// Expect: cancellation: adopted work cancelled
// Expect: cancellation: a caller who left hears offline at once
// Expect: cancellation: the shared work cancelled

enum LoadError: Error { case offline, cancelled }

let chain = stoppable(reporting: LoadError.cancelled).map { $0 + 1 }
chain.cancel()
show("cancellation: a chain's work", chain)
let adopting = ResultPromise(value: 1).thenAsync { _ in stoppable(reporting: LoadError.cancelled) }.map { $0 + 1 }
adopting.cancel()
show("cancellation: adopted work", adopting)
let shared = stoppable(reporting: LoadError.cancelled)
let caller = shared.abandoningOnCancel(with: .offline)
caller.cancel()
caller.await { result in  // settled already: runs now, before the shared work has ended
  if case .failure(let error) = result { print("cancellation: a caller who left hears \(error) at once") }
}
show("cancellation: the shared work", shared)
