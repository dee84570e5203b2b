// expect: arguments to generic parameter 'Failure' ('APIError' and 'CacheError') are expected to be equal
// A chain whose layers fail with different error types, in the README's inline style: the compiler must name
// the error types (a trailing closure is never taken for `init(value:)`'s value, which would make it report a
// closure that is not Sendable, far from the cause).
import ResultPromise

struct User: Sendable { var name: String }
enum CacheError: Error { case missing }
enum APIError: Error { case offline }

func load(_ id: Int, completion: @escaping @Sendable (Result<User, CacheError>) -> Void) {}
func refresh(_ user: User, completion: @escaping @Sendable (Result<User, APIError>) -> Void) {}

func show(_ error: any Error) {}

func update(_ id: Int) {
  ResultPromise { done in load(id, completion: done) }
    .thenAsync { user in ResultPromise { done in refresh(user, completion: done) } }
    .await { result in if case .failure(let error) = result { show(error) } }
}
