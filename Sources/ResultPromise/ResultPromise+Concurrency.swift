// The bridge to Swift Concurrency, both ways: `await` a promise from async code, and start a promise
// from an async operation. The value moves between tasks, so `Success` must be `Sendable`; main-actor
// code awaits a promise of a non-`Sendable` value through `onMainActor`.

extension ResultPromise where Success: Sendable {
  /// The success value, awaited from Swift Concurrency; throws the failure.
  ///
  /// ```swift
  /// let user = try await load(id).value   // throws(StoreError)
  /// ```
  ///
  /// **Cancellation:** awaiting does not end early when the awaiting task is cancelled; it resumes when
  /// the promise settles, as `Task.value` does. The promise's typed `Failure` has no room for a
  /// `CancellationError`, and the work behind the promise is not the task's to cancel. To bound the wait,
  /// await `promise.timeout(_:failure:).value`. Any number of tasks may await one promise; each resumes
  /// exactly once.
  @inlinable public var value: Success {
    get async throws(Failure) { try await result.get() }
  }

  /// The result, awaited from Swift Concurrency.
  ///
  /// ```swift
  /// switch await load(id).result {
  /// case .success(let user): show(user)
  /// case .failure(let error): show(error)
  /// }
  /// ```
  ///
  /// **Cancellation:** awaiting does not end early when the awaiting task is cancelled; it resumes when
  /// the promise settles, as `Task.value` does. To bound the wait, use ``timeout(_:failure:)``. Any
  /// number of tasks may await one promise; each resumes exactly once.
  @inlinable public var result: Result<Success, Failure> {
    get async {
      await withCheckedContinuation { continuation in
        self.await { continuation.resume(returning: $0) }
      }
    }
  }

  /// Starts a `Task` that runs `operation` and settles the promise with its outcome.
  ///
  /// ```swift
  /// let profile = ResultPromise<Profile, APIError> { () async throws(APIError) -> Profile in
  ///     try await api.profile(id)
  /// }
  /// profile.onSuccess { show($0) }
  /// ```
  ///
  /// The promise settles on the thread the task finishes on. The task is not cancelled if the promise
  /// is released; it holds the promise until it finishes.
  /// - Parameters:
  ///   - priority: The task's priority; `nil` for the default.
  ///   - operation: The async work; its value or thrown error settles the promise.
  @inlinable
  public convenience init(
    priority: TaskPriority? = nil,
    operation: @escaping @Sendable () async throws(Failure) -> Success
  ) {
    self.init(_result: nil, reportsBroken: false)
    Task(priority: priority) {
      do throws(Failure) {
        self.fulfil(with: .success(try await operation()))
      } catch {
        self.fulfil(with: .failure(error))
      }
    }
  }
}

extension ResultPromise where Success: Sendable, Failure == Never {
  /// The success value, awaited from Swift Concurrency; no `try`, since the promise cannot fail.
  ///
  /// ```swift
  /// let tick = await ResultPromise<String, Never>.after(.seconds(1), value: "tick").value
  /// ```
  ///
  /// Cancellation of the awaiting task does not end the wait early; see ``ResultPromise/result``.
  @inlinable public var value: Success {
    get async { await result.get() }
  }
}
