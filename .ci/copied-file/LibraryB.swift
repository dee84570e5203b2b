// LibraryB's own use of its private copy (`Scripts/vendor --internal --with Timing,Combining`): several
// loads at once, within a time limit.

extension LibraryB {
  /// Loads several names at once, failing with `.offline` if they take more than a minute.
  public static func loadAll(
    _ ids: [Int], completion: @escaping @Sendable (Result<[String], LibraryBError>) -> Void
  ) {
    let loads = ids.map { id in ResultPromise<String, LibraryBError> { done in load(id, completion: done) } }
    ResultPromise.all(loads).timeout(.seconds(60), failure: .offline).await(completion)
  }
}
