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

// App code (the *Using ResultPromise in App Code* article): a persistence layer in the shape of Core
// Data, whose objects are not Sendable, and a server reached through completion handlers.

/// A model object that is not `Sendable`, as Core Data objects are not.
final class Band {
  let id: Int
  var name: String
  var otherNames: [String] = []
  init(id: Int, name: String) {
    self.id = id
    self.name = name
  }
  /// A `Sendable` copy, to send to the server.
  var snapshot: BandSnapshot { BandSnapshot(id: id, name: name, otherNames: otherNames) }
  func apply(_ snapshot: BandSnapshot) { otherNames = snapshot.otherNames }
}

struct BandSnapshot: Sendable {
  var id: Int
  var name: String
  var otherNames: [String]
}

/// The main-actor context that hands out `Band`s (like a main-queue `NSManagedObjectContext`).
final class StoreContext {
  func fetchBand(id: Int) -> Result<Band, AppError> { .success(Band(id: id, name: "The Beatles")) }
  func save() -> Result<Void, AppError> { .success(()) }
  func placeholder() -> Band { Band(id: 0, name: "Unknown") }
}

/// The server, reached through completion handlers that call back on a background queue.
struct BandAPI: Sendable {
  func bootstrap(completion: @escaping @Sendable (Result<Void, AppError>) -> Void) {
    DispatchQueue.global().async { completion(.success(())) }
  }
  func update(_ band: BandSnapshot, completion: @escaping @Sendable (Result<BandSnapshot, AppError>) -> Void) {
    DispatchQueue.global().async { completion(.success(band)) }
  }
}

let bandAPI = BandAPI()
@MainActor let context = StoreContext()
func log(_ value: Any) {}

// Recipes (the *Getting Started* article): APIs of the kinds that need some care to wrap.

extension AppError {
  /// An app's mapping of an untyped error.
  init(_ error: (any Error)?) { self = .offline }
}

/// An older API whose completion hands over two optionals.
struct LegacyAPI: Sendable {
  func fetchUser(_ id: Int, completion: @escaping @Sendable (User?, (any Error)?) -> Void) {
    completion(User(id: id, name: "Ada"), nil)
  }
  func requestAccess(completion: @escaping @Sendable (Bool, (any Error)?) -> Void) { completion(true, nil) }
  func remove(_ id: Int, completion: @escaping @Sendable ((any Error)?) -> Void) { completion(nil) }
}
let legacyAPI = LegacyAPI()

/// A library that reports `any Error`.
struct FileStore: Sendable {
  func read(_ path: String, completion: @escaping @Sendable (Result<Data, any Error>) -> Void) {
    completion(.success(Data()))
  }
}
let fileStore = FileStore()

/// A model object that is not `Sendable`.
final class Document {
  var text = ""
}

/// An API that makes a new `Document` on its own queue and hands it over (`sending`).
struct Parser: Sendable {
  func parse(_ text: String, completion: @escaping @Sendable (sending Document) -> Void) {
    DispatchQueue.global().async {
      let document = Document()
      document.text = text
      completion(document)
    }
  }
}
let parser = Parser()

/// An API that calls back on the main actor.
struct MainActorReader: Sendable {
  func open(_ path: String, completion: @escaping @MainActor (Document) -> Void) {
    DispatchQueue.main.async { completion(Document()) }
  }
}
let mainActorReader = MainActorReader()

// Cancellation (the article's first example defines its own `APIError` and `data(from:)`; the others use these).
enum APIError: Error { case offline, cancelled, badStatus(Int) }
func data(from url: URL) -> ResultPromise<Data, APIError> {
  ResultPromise { done, onCancel in onCancel { done(.failure(.cancelled)) } }
}
let profileURL = URL(string: "https://example.com/profile")!
func avatarURL(_ size: Int) -> URL { profileURL }
func render(page: Int) async {}

/// A crash reporter's API, for the unheard-failure recipe.
enum CrashReporter {
  static func recordNonFatal(_ error: any Error, reason: String) {}
}
