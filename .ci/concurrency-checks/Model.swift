// Shared by every snippet: a model class that is not Sendable, and an error type.
import Dispatch
import ResultPromise

final class Model {
  var name = ""
}

enum ModelError: Error {
  case missing
}
