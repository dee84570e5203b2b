// The core and the cancellation file (`Scripts/vendor --with Cancellation`): work that stops when asked, a
// request from the end of a chain, and one from a chain that starts at a value and adopts the work.
// Expect: cancellation: a chain's work cancelled
// Expect: cancellation: adopted work cancelled

enum LoadError: Error { case offline, cancelled }

let chain = stoppable(reporting: LoadError.cancelled).map { $0 + 1 }
chain.cancel()
show("cancellation: a chain's work", chain)
let adopting = ResultPromise(value: 1).thenAsync { _ in stoppable(reporting: LoadError.cancelled) }.map { $0 + 1 }
adopting.cancel()
show("cancellation: adopted work", adopting)
