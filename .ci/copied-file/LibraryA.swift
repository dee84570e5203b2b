// LibraryA's own use of its private copy (`Scripts/vendor --internal --main-actor`): a main-actor chain.

extension LibraryA {
  /// Loads a name and hands it to `show` on the main actor.
  @MainActor public static func show(_ id: Int, _ show: @escaping @MainActor (String) -> Void) {
    ResultPromise<String, LibraryAError> { done in load(id, completion: done) }.onMainActor.onSuccess(show)
  }
}
