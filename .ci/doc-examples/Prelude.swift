// Stand-ins for the services that the README and the DocC articles talk to, so that every Swift code
// block in them compiles in CI (see extract.py). Not part of the library.
import Dispatch
import Foundation
import ResultPromise

struct User: Sendable, Codable, Equatable {
  var id: Int
  var name: String
}

struct Avatar: Sendable {}
struct Settings: Sendable {}

enum StoreError: Error, Equatable {
  case notFound(id: Int)
  case corrupt
}

enum AppError: Error, Equatable {
  case offline
  case timedOut
  case storage(StoreError)
  case notFound

  var isTransient: Bool { self == .offline || self == .timedOut }
}

/// A completion-handler cache, as apps have.
struct Cache: Sendable {
  func load(_ id: Int, completion: @escaping @Sendable (Result<User, AppError>) -> Void) {
    DispatchQueue.global().async { completion(.success(User(id: id, name: "Ada"))) }
  }
  func save(_ user: User, completion: @escaping @Sendable (Result<User, AppError>) -> Void) {
    DispatchQueue.global().async { completion(.success(user)) }
  }
}

/// A completion-handler remote API, as apps have, with one async method.
struct API: Sendable {
  func refresh(_ user: User, completion: @escaping @Sendable (Result<User, AppError>) -> Void) {
    DispatchQueue.global().async { completion(.success(user)) }
  }
  func avatar(_ user: User, completion: @escaping @Sendable (Result<Avatar, AppError>) -> Void) {
    completion(.success(Avatar()))
  }
  func settings(_ id: Int, completion: @escaping @Sendable (Result<Settings, AppError>) -> Void) {
    completion(.success(Settings()))
  }
  func profile(_ id: Int) async throws(AppError) -> User { User(id: id, name: "Ada") }
}

/// A lower layer with its own error type.
struct Database: Sendable {
  func load(_ id: Int, completion: @escaping @Sendable (Result<User, StoreError>) -> Void) {
    completion(id > 0 ? .success(User(id: id, name: "Ada")) : .failure(.notFound(id: id)))
  }
}

let cache = Cache()
let api = API()
let database = Database()
let id = 1
let ids = [1, 2, 3]

func show(_ value: Any) {}
