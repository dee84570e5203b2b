// Sharing: one run of some work per key, shared by every caller of that key; each caller may leave.
//
// A *run* is the promise that `start` made for a key, with the callers who wait for it. Each caller gets a
// promise of its own, made from the run's as `abandoningOnCancel(with:)` makes one: it settles like the run,
// or fails at once with the caller's own failure when a request reaches it first, and takes back what it
// registered on the run — the registration it made there carries the hook that makes the caller leave, once
// its promise is decided in any way. The registry counts each run's callers under its lock, and looks a key
// up in the same critical section in which a caller joins or leaves. So a caller who comes just as the last
// one leaves either came first, and the run is still wanted, or came after, and finds no run and starts a new
// one: it never joins a run already asked to stop. The last caller to leave takes the run out of the registry
// in that same critical section, and asks it to stop after the lock, once. A run also leaves the registry
// when it settles (either way: results are not kept) and on `forget(_:)`. So the registry holds memory for
// the runs going on and the callers waiting, and for nothing that is over.
//
// `start` runs on the calling thread, outside the lock, so it may use the registry itself. A caller who comes
// while `start` runs joins the run already: it waits on the run's own promise (`shared`), which the promise
// `start` returns settles later.
//
// This file needs the core file and `ResultPromise+Cancellation.swift` beside it.

/// A registry of running work by key: every caller of a key shares one run of the work, each caller may leave
/// on its own, and the last one out stops the work.
///
/// ```swift
/// let downloads = SharedWork<URL, Data, LoadError>()
///
/// func image(_ url: URL) -> ResultPromise<Data, LoadError> {
///     downloads.promise(for: url, leaving: .cancelled) { url in
///         data(from: url)   // ResultPromise { done, onCancel in … }: called once per run
///     }
/// }
///
/// let avatar = image(url)
/// avatar.cancel()   // fails `avatar` with .cancelled at once; the download goes on while
///                   // other callers wait, and is asked to stop when the last of them leaves
/// ```
///
/// A caller who comes while a run for its key is going on and wanted joins it; otherwise a new run starts.
/// Joining and leaving are one step with looking the key up: a caller who comes just as the last caller
/// leaves never joins the run being stopped, and never gets its cancelled failure; it starts a new run. Go's
/// `singleflight.Group` and Nuke's request coalescing do the same job.
///
/// A run is forgotten when it settles, success or failure (results are not kept: store values in your cache),
/// when ``forget(_:)`` is called, and — with `stopsWhenAllLeave` — when its last caller leaves. Nothing stays
/// behind per caller who left or per key whose run is over.
///
/// Thread-safe: call it from any thread or actor. `start` runs on the calling thread, never under a lock; a
/// caller's promise is delivered as any promise is, on the thread that settles it. The registry hashes and
/// compares keys under its lock, so a key's `hash(into:)` and `==` must not use the registry.
public nonisolated final class SharedWork<Key: Hashable & Sendable, Success, Failure: Error>:
  @unchecked Sendable
{
  // `@unchecked Sendable`: `runs`, and each run's `callers` and `work`, are read and written only under the
  // registry's lock; `stopsWhenAllLeave` never changes.

  /// Creates an empty registry.
  ///
  /// ```swift
  /// let tokens = SharedWork<Account.ID, Token, AuthError>()                    // stops when all leave
  /// let pages = SharedWork<Page.ID, Page, APIError>(stopsWhenAllLeave: false)   // runs to its end
  /// ```
  /// - Parameter stopsWhenAllLeave: Whether the last caller of a run to leave asks its work to stop (`true`,
  ///   the default), and the run is forgotten then; or the work runs to its end, and callers who come later
  ///   still join it (`false`, what `ignoringCancel()` gives by hand).
  public init(stopsWhenAllLeave: Bool = true) {
    self.stopsWhenAllLeave = stopsWhenAllLeave
  }

  /// The caller's own promise of the work for `key`: joins the run going on for `key`, or starts one with
  /// `start`.
  ///
  /// ```swift
  /// let profile = profiles.promise(for: id, leaving: .cancelled) { id in api.profile(id) }
  /// profile.await { result in … }
  /// profile.cancel()   // this caller leaves: it hears .cancelled at once
  /// ```
  ///
  /// `start` is called at most once per run: only when no run for `key` is going on and wanted, on the
  /// calling thread, never under a lock (it may call this registry, for this key or another). A caller who
  /// comes while `start` runs joins the run it starts.
  ///
  /// The returned promise settles like the run. If a request (``ResultPromise/cancel()``) reaches it first, it
  /// fails at once with `failure`, on the requesting thread, and the caller leaves the run, as
  /// ``ResultPromise/abandoningOnCancel(with:file:line:)`` leaves a shared promise; settling it by hand leaves
  /// too. When the last caller of a run has left, the run is forgotten and — with `stopsWhenAllLeave` — its
  /// promise is asked to stop, once (a promise that cannot be cancelled runs to its end). A caller who comes
  /// after that starts a new run. Dropping the returned promise without cancelling it does not leave.
  /// - Parameters:
  ///   - key: Which work.
  ///   - failure: What this caller hears if it leaves before the run settles; evaluated only then.
  ///   - file: The file of the call, named in this promise's reports in debug builds; leave the default.
  ///   - line: The line of the call, named with the file; leave the default.
  ///   - start: Starts the work for the key, and returns its promise: a cancellable one, for the last caller
  ///     out to stop it.
  /// - Returns: A promise that settles like the run, or fails with `failure` if this caller leaves first.
  @inlinable public func promise(
    for key: Key, leaving failure: @autoclosure @escaping @Sendable () -> Failure,
    file: StaticString = #fileID, line: UInt = #line,
    start: (Key) -> ResultPromise<Success, Failure>
  ) -> ResultPromise<Success, Failure> {
    let (run, isNew) = _Lock(for: self).withLock {
      if let run = runs[key] {
        run.callers += 1
        return (run, false)
      }
      let shared = ResultPromise<Success, Failure>(_pending: nil, flags: .heard)._made(at: file, line)
      let run = _Run(self, key, shared)
      runs[key] = run
      return (run, true)
    }
    if isNew { _begin(run, with: start(key)) }
    let leaving: @Sendable () -> Void = { run.registry._leave(run) }
    return run.shared._abandoning(failure, at: file, line, leaving: leaving)
  }

  /// Forgets the run for `key`, if there is one: the next caller of `key` starts a new run, while the callers
  /// of this one keep it, and its last caller to leave still stops it.
  ///
  /// ```swift
  /// session.onSignOut { tokens.forget(account.id) }   // the next caller refreshes anew
  /// ```
  /// - Parameter key: Which work.
  public func forget(_ key: Key) {
    let forgotten = _Lock(for: self).withLock { _remove(key) }
    _ = consume forgotten
  }

  /// Whether a run for `key` is going on and wanted: started, not settled, not forgotten, and not left by all
  /// its callers. For tests and metrics: by the time you act on it, it may have changed.
  ///
  /// ```swift
  /// #expect(downloads.isRunning(url) == false)
  /// ```
  /// - Parameter key: Which work.
  /// - Returns: Whether the next caller of `key` would join a run.
  public func isRunning(_ key: Key) -> Bool {
    _Lock(for: self).withLock { runs[key] != nil }
  }

  // MARK: - Runs (internal)

  /// One run: its registry and key, the promise its callers wait on, how many of them still wait, and the
  /// registry's observer on the promise `start` made, to take back, and stop that promise through, once nobody
  /// waits (`nil` once it has settled). A caller's way out holds its run alone,
  /// so that it costs no allocation of its own.
  ///
  /// `@unchecked Sendable`: `callers` and `work` are used only under the registry's lock; the rest never changes.
  @usableFromInline final class _Run: @unchecked Sendable {
    @usableFromInline let registry: SharedWork
    @usableFromInline let key: Key
    @usableFromInline let shared: ResultPromise<Success, Failure>
    @exclusivity(unchecked) @usableFromInline var callers = 1
    @exclusivity(unchecked) @usableFromInline var work: _Registration<Success, Failure>?
    @inlinable init(_ registry: SharedWork, _ key: Key, _ shared: ResultPromise<Success, Failure>) {
      self.registry = registry
      self.key = key
      self.shared = shared
    }
  }

  @usableFromInline let stopsWhenAllLeave: Bool
  /// The runs going on and wanted, by key.
  @exclusivity(unchecked) @usableFromInline var runs: [Key: _Run] = [:]

  /// Settles `run`'s promise like `work`, once `work` settles, and forgets the run then.
  @inlinable func _begin(_ run: _Run, with work: ResultPromise<Success, Failure>) {
    // The observer holds the run alone, so that it needs no closure context of its own.
    let place = work._await { result in
      let forgotten: (key: Key, value: _Run)? = _Lock(for: run.registry).withLock {
        run.work = nil
        return run.registry._remove(run.key, only: run)
      }
      _ = consume forgotten
      run.shared.fulfil(with: result)
    }
    guard place != nil else { return }  // it has run
    // Kept even if `work` settles meanwhile: stopping a settled promise, and withdrawing from it, do nothing.
    let waiting = _Registration(work, at: place)
    _Lock(for: self).withLock { run.work = waiting }
  }

  /// One caller of `run` has its outcome, however it came. The last to leave forgets the run, in the same
  /// critical section, and, with `stopsWhenAllLeave`, takes back the registry's observer on its promise and
  /// stops it, once (unless it has settled).
  @inlinable func _leave(_ run: _Run) {
    var forgotten: (key: Key, value: _Run)?
    let waiting: _Registration<Success, Failure>? = _Lock(for: self).withLock {
      run.callers -= 1
      guard run.callers == 0, stopsWhenAllLeave else { return nil }
      forgotten = _remove(run.key, only: run)
      return run.work.take()
    }
    _ = consume forgotten
    waiting?.withdraw()
    // A promise that is gone, or has no record, has nothing to stop.
    guard let work = waiting?.promise, let record = work._extras as? _Cancellation else { return }
    record.cancel(at: work._depth)
  }

  /// Under the lock: takes the run for `key` (only if it is `run`, when given) out of the registry, and returns
  /// it with its key, to be released after the lock (a key's or a promise's deinitialiser is user code). Gives
  /// storage back once three-quarters of it is unused.
  @inlinable func _remove(_ key: Key, only run: _Run? = nil) -> (key: Key, value: _Run)? {
    guard let index = runs.index(forKey: key) else { return nil }
    guard run == nil || runs[index].value === run else { return nil }
    let removed = runs.remove(at: index)
    if runs.count < runs.capacity / 4 {
      runs = Dictionary(uniqueKeysWithValues: runs.lazy.map { ($0.key, $0.value) })
    }
    return removed
  }
}
