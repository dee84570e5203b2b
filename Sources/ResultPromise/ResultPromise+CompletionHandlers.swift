// Completion handlers in the shapes older SDKs use: `(Value?, Error?)`, `(Value, Error?)` and `(Error?)`.
//
// Each initialiser — `ResultPromise { done in api.call(completion: done) } mapError: { … }` — hands `start`
// a completion function of that shape, turns what it is called with into a
// `Result`, and settles the promise as `init(_ start:)` does. The error reaches the promise through
// `mapError`, the caller's mapping from `any Error` to the promise's `Failure` (with `Failure == any Error`,
// `{ $0 }`). A `(Value?, Error?)` handler called with neither a value nor an error breaks its own
// convention; its `mapError` then receives `nil` and says what that means.
//
// Each shape also has a form for work that can be stopped — `ResultPromise { done, onCancel in … } mapError:
// { … }` — built on `ResultPromise { done, onCancel in … }`, with the same conversion (`_completion`).
//
// This file needs the core file and `ResultPromise+Cancellation.swift` beside it.

nonisolated extension ResultPromise where Success: Sendable {
  /// Wraps a completion-handler API that calls back with `(Value?, Error?)`: an error fails the promise,
  /// otherwise the value fulfils it.
  ///
  /// ```swift
  /// let placemarks = ResultPromise { done in
  ///     geocoder.geocodeAddressString(address, completionHandler: done)
  /// } mapError: { error in
  ///     error.map(AppError.geocoding) ?? .notFound   // nil: neither placemarks nor an error
  /// }
  /// ```
  ///
  /// A call with an error fails the promise with `mapError(error)`, whatever the value; a call with a value
  /// and no error succeeds with the value; a call with neither fails it with `mapError(nil)`. Otherwise as
  /// ``init(_:file:line:)-815ew``: `start` runs at once, the completion may be called on any thread, only its
  /// first call counts, and one released uncalled while the promise is pending is reported.
  /// (A `mapError` that takes a non-optional error picks the `(Value, Error?)` form instead, whose success is
  /// then the optional value itself.)
  /// - Parameters:
  ///   - start: Starts the work and hands `completion` to it.
  ///   - mapError: Turns the handler's error into the promise's `Failure`; `nil` when the handler was called
  ///     with neither a value nor an error.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (_ completion: @escaping @Sendable (Success?, (any Error)?) -> Void) -> Void,
    mapError: @escaping @Sendable ((any Error)?) -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init({ start(ResultPromise._completion($0, mapError)) }, file: file, line: line)
  }

  /// Wraps a completion-handler API that calls back with `(Value?, Error?)` and whose work can be stopped:
  /// `start` also gets an `onCancel` function to register what stops it.
  ///
  /// ```swift
  /// let placemarks = ResultPromise { done, onCancel in
  ///     geocoder.geocodeAddressString(address, completionHandler: done)
  ///     onCancel { geocoder.cancelGeocode() }   // it then calls back with CLError.geocodeCanceled
  /// } mapError: { error in
  ///     error.map(AppError.geocoding) ?? .notFound
  /// }
  /// ```
  ///
  /// The completion is read as for the form without `onCancel`; `onCancel` is as for
  /// ``init(_:file:line:)-841yn``: a handler runs at most once, on a request (see ``cancel()``) that comes
  /// before the promise settles, on the requesting thread — possibly while the work settles it.
  /// - Parameters:
  ///   - start: Starts the work, hands `completion` to it and registers its handlers with `onCancel`.
  ///   - mapError: Turns the handler's error into the promise's `Failure`; `nil` when the handler was called
  ///     with neither a value nor an error.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (
      _ completion: @escaping @Sendable (Success?, (any Error)?) -> Void,
      _ onCancel: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) -> Void
    ) -> Void,
    mapError: @escaping @Sendable ((any Error)?) -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init({ start(ResultPromise._completion($0, mapError), $1) }, file: file, line: line)
  }

  /// Wraps a completion-handler API that calls back with `(Value, Error?)`: an error fails the promise,
  /// otherwise the value fulfils it.
  ///
  /// ```swift
  /// let granted = ResultPromise { done in
  ///     notificationCenter.requestAuthorization(options: [.alert], completionHandler: done)
  /// } mapError: { AppError.notifications($0) }
  /// ```
  ///
  /// A call with an error fails the promise with `mapError(error)` and ignores the value. Otherwise as
  /// ``init(_:file:line:)-815ew``.
  /// - Parameters:
  ///   - start: Starts the work and hands `completion` to it.
  ///   - mapError: Turns the handler's error into the promise's `Failure`.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (_ completion: @escaping @Sendable (Success, (any Error)?) -> Void) -> Void,
    mapError: @escaping @Sendable (any Error) -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init({ start(ResultPromise._completion($0, mapError)) }, file: file, line: line)
  }

  /// Wraps a completion-handler API that calls back with `(Value, Error?)` and whose work can be stopped:
  /// `start` also gets an `onCancel` function to register what stops it.
  ///
  /// ```swift
  /// let granted = ResultPromise { done, onCancel in
  ///     let request = permissions.request(.camera, completion: done)
  ///     onCancel { request.withdraw() }
  /// } mapError: { AppError.permissions($0) }
  /// ```
  ///
  /// The completion is read as for the form without `onCancel`; `onCancel` is as for
  /// ``init(_:file:line:)-841yn``.
  /// - Parameters:
  ///   - start: Starts the work, hands `completion` to it and registers its handlers with `onCancel`.
  ///   - mapError: Turns the handler's error into the promise's `Failure`.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (
      _ completion: @escaping @Sendable (Success, (any Error)?) -> Void,
      _ onCancel: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) -> Void
    ) -> Void,
    mapError: @escaping @Sendable (any Error) -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init({ start(ResultPromise._completion($0, mapError), $1) }, file: file, line: line)
  }

  /// The completion of the `(Value?, Error?)` shape: an error fails, a value succeeds, neither fails with
  /// `mapError(nil)`.
  @inlinable static func _completion(
    _ fulfil: @escaping @Sendable (Result<Success, Failure>) -> Void,
    _ mapError: @escaping @Sendable ((any Error)?) -> Failure
  ) -> @Sendable (Success?, (any Error)?) -> Void {
    { value, error in
      if error == nil, let value { return fulfil(.success(value)) }
      fulfil(.failure(mapError(error)))
    }
  }

  /// The completion of the `(Value, Error?)` shape: an error fails, whatever the value.
  @inlinable static func _completion(
    _ fulfil: @escaping @Sendable (Result<Success, Failure>) -> Void,
    _ mapError: @escaping @Sendable (any Error) -> Failure
  ) -> @Sendable (Success, (any Error)?) -> Void {
    { value, error in fulfil(error.map { .failure(mapError($0)) } ?? .success(value)) }
  }
}

nonisolated extension ResultPromise where Success == Void {
  /// Wraps a completion-handler API that calls back with `(Error?)` alone: an error fails the promise,
  /// `nil` fulfils it.
  ///
  /// ```swift
  /// let scheduled = ResultPromise { done in
  ///     notificationCenter.add(request, withCompletionHandler: done)
  /// } mapError: { AppError.notifications($0) }
  /// ```
  ///
  /// Otherwise as ``init(_:file:line:)-815ew``.
  /// - Parameters:
  ///   - start: Starts the work and hands `completion` to it.
  ///   - mapError: Turns the handler's error into the promise's `Failure`.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (_ completion: @escaping @Sendable ((any Error)?) -> Void) -> Void,
    mapError: @escaping @Sendable (any Error) -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init({ start(ResultPromise._completion($0, mapError)) }, file: file, line: line)
  }

  /// Wraps a completion-handler API that calls back with `(Error?)` alone and whose work can be stopped:
  /// `start` also gets an `onCancel` function to register what stops it.
  ///
  /// ```swift
  /// let uploaded = ResultPromise { done, onCancel in
  ///     let upload = uploader.send(file, completion: done)
  ///     onCancel { upload.cancel() }   // it then calls back with UploadError.cancelled
  /// } mapError: { AppError.upload($0) }
  /// ```
  ///
  /// The completion is read as for the form without `onCancel`; `onCancel` is as for
  /// ``init(_:file:line:)-841yn``.
  /// - Parameters:
  ///   - start: Starts the work, hands `completion` to it and registers its handlers with `onCancel`.
  ///   - mapError: Turns the handler's error into the promise's `Failure`.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  @inlinable public convenience init(
    _ start: (
      _ completion: @escaping @Sendable ((any Error)?) -> Void,
      _ onCancel: @escaping @Sendable (_ handler: @escaping @Sendable () -> Void) -> Void
    ) -> Void,
    mapError: @escaping @Sendable (any Error) -> Failure,
    file: StaticString = #fileID, line: UInt = #line
  ) {
    self.init({ start(ResultPromise._completion($0, mapError), $1) }, file: file, line: line)
  }

  /// The completion of the `(Error?)` shape: an error fails, `nil` succeeds.
  @inlinable static func _completion(
    _ fulfil: @escaping @Sendable (Result<Void, Failure>) -> Void,
    _ mapError: @escaping @Sendable (any Error) -> Failure
  ) -> @Sendable ((any Error)?) -> Void {
    { error in fulfil(error.map { .failure(mapError($0)) } ?? .success(())) }
  }
}
