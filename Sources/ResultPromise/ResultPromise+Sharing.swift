// Sharing: one run of some work per key, shared by every caller of that key; each caller may leave.
//
// A *run* is the promise that `start` made for a key, with the callers who wait for it. Each caller gets a
// promise of its own, made from the run's as `abandoningOnCancel(with:)` makes one: it settles like the run,
// or fails at once with the caller's own failure when a request reaches it first, and takes back what it
// registered on the run — the registration it made there carries the hook that makes the caller leave, once
// its promise is decided in any way. The registry counts each run's callers under its lock, and looks a key
// up in the same critical section in which a caller joins or leaves. So a caller who comes just as the last
// one leaves either came first, and the run is still wanted, or came after, and finds no run and starts a new
// one: it never joins a run already asked to stop. A run leaves the registry when it settles (either way:
// results are not kept), on `forget(_:)`, and — with `stopsWhenAllLeave` — when its last caller leaves, in
// that caller's critical section. So the registry holds memory for the runs going on and the callers
// waiting, and for nothing that is over.
//
// Interest. A run is a dependent of the promise `start` returned, as a step made from it would be: it
// counts once when the run begins and — with `stopsWhenAllLeave` — lets go once, after the lock, when its
// last caller leaves. So the work is asked to stop then only if nothing else wants it (a `map` someone made
// from it, the run of another key that returned the same promise). Without `stopsWhenAllLeave` the run
// never lets go, as `ignoringCancel()` does not.
//
// The lock. Looking a key up hashes it and compares it: user code. So the registry has a lock of its own,
// not a stripe of the table that promises and records share: a key whose `hash(into:)` or `==` reads a
// promise, another registry or the diagnostics handlers cannot meet its own lock there. It is held for the
// lookup and the count, never while `start`, a caller's promise or a deinitialiser runs.
//
// `start` runs on the calling thread, outside the lock, so it may use the registry itself. A caller who comes
// while `start` runs joins the run already: it waits on the run's own promise (`shared`), which the promise
// `start` returns settles later.
//
// This file needs the core file and `ResultPromise+Cancellation.swift` beside it.

#if canImport(Darwin)
  import Darwin
#else
  import Synchronization
#endif

/// A registry of running work by key: every caller of a key shares one run of the work, each caller may leave
/// on its own, and the last one out stops the work unless something else wants it.
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
///                   // (unless something else still wants it: it is stopped as a dependent would)
/// ```
///
/// A caller who comes while a run for its key is going on and wanted joins it; otherwise a new run starts.
/// Joining and leaving are one step with looking the key up: a caller who comes just as the last caller
/// leaves never joins the run being stopped, and never gets its cancelled failure; it starts a new run. Go's
/// `singleflight.Group` and Nuke's request coalescing do the same job.
///
/// A run is forgotten when it settles, success or failure, when ``forget(_:)`` is called, and — with
/// `stopsWhenAllLeave` — when its last caller leaves. Nothing stays behind per caller who left or per key whose
/// run is over. Results are not kept: store values in your cache *inside the run*, in `start`'s chain. The run
/// is forgotten as it settles, before its callers' steps run, so a value stored in a caller's own steps comes
/// too late for a caller in between, who finds neither value nor run and starts another load:
///
/// ```swift
/// downloads.promise(for: url, leaving: .cancelled) { url in
///     data(from: url).map { data in
///         disk.store(data, for: url)   // inside the run
///         return data
///     }
/// }
/// ```
///
/// Thread-safe: call it from any thread or actor. `start` runs on the calling thread, never under a lock; a
/// caller's promise is delivered as any promise is, on the thread that settles it.
///
/// A registry is `Sendable` when `Success` is: one run's value goes to every caller, in whatever isolation
/// each is. A registry of values that are not `Sendable` (a model object) is usable too, and the compiler
/// keeps it in one isolation domain, such as the main actor.
///
/// A key's `hash(into:)` and `==` run while the registry holds its own lock, which no promise or other
/// registry uses: they may read promises, other registries and ``PromiseDiagnostics``, but must not call
/// this registry, nor a registry whose keys call this one (either waits for ever).
public nonisolated final class SharedWork<Key: Hashable & Sendable, Success, Failure: Error> {

  /// Creates an empty registry.
  ///
  /// ```swift
  /// let tokens = SharedWork<Account.ID, Token, AuthError>()                    // stops when all leave
  /// let pages = SharedWork<Page.ID, Page, APIError>(stopsWhenAllLeave: false)   // runs to its end
  /// ```
  /// - Parameter stopsWhenAllLeave: Whether the last caller of a run to leave forgets the run and withdraws
  ///   its interest in the work, which is then asked to stop unless something else wants it (`true`, the
  ///   default); or the work runs to its end, and callers who come later still join it (`false`, what
  ///   `ignoringCancel()` gives by hand).
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
  /// too. When the last caller of a run has left, with `stopsWhenAllLeave`, the run is forgotten and withdraws
  /// its interest in the promise `start` returned, once: that promise is asked to stop if nothing else wants
  /// it — a `map` made from it elsewhere, or the run of another key that got the same promise, keeps it going
  /// (a promise that cannot be cancelled runs to its end). A caller who comes after that starts a new run.
  /// Dropping the returned promise without cancelling it does not leave.
  ///
  /// `start` must return the work's own promise, never one this registry gave a caller of the same key
  /// while `start` ran: that run would wait for itself. Debug builds report it, through
  /// ``PromiseDiagnostics/brokenPromiseHandler``, naming the `promise(for:)` call that made it.
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
    let (run, isNew) = _withLock {
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
    let caller = run.shared._abandoning(failure, at: file, line, leaving: leaving)
    #if DEBUG
      _withLock { run.lastJoined = caller }
    #endif
    return caller
  }

  /// Forgets the run for `key`, if there is one: the next caller of `key` starts a new run, while the callers
  /// of this one keep it, and its last caller to leave still stops it.
  ///
  /// ```swift
  /// session.onSignOut { tokens.forget(account.id) }   // the next caller refreshes anew
  /// ```
  /// - Parameter key: Which work.
  public func forget(_ key: Key) {
    let forgotten = _withLock { _remove(key) }
    _ = consume forgotten
  }

  /// Whether the next caller of `key` would join a run: one was started and has neither settled nor been
  /// forgotten (with `stopsWhenAllLeave`, the last caller to leave forgets it; without, it stays until it
  /// settles, with or without callers). For tests and metrics: by the time you act on it, it may have changed.
  ///
  /// ```swift
  /// #expect(downloads.isRunning(url) == false)
  /// ```
  /// - Parameter key: Which work.
  /// - Returns: Whether the next caller of `key` would join a run.
  public func isRunning(_ key: Key) -> Bool {
    _withLock { runs[key] != nil }
  }

  // MARK: - Runs (internal)

  /// One run: its registry and key, the promise its callers wait on, how many of them still wait, the
  /// registry's observer on the promise `start` made, to take back once nobody waits (`nil` once it has
  /// settled), and the run's interest in that promise, to let go of then. A caller's way out holds its run
  /// alone, so that it costs no allocation of its own.
  ///
  /// `@unchecked Sendable`: `callers`, `work` and `interest` (and, in debug builds, `lastJoined`) are used only
  /// under the registry's lock; the rest never changes. A registry of values that are not
  /// `Sendable` is not `Sendable` itself, so its runs stay in its isolation domain.
  @usableFromInline final class _Run: @unchecked Sendable {
    @usableFromInline let registry: SharedWork
    @usableFromInline let key: Key
    @usableFromInline let shared: ResultPromise<Success, Failure>
    @exclusivity(unchecked) @usableFromInline var callers = 1
    @exclusivity(unchecked) @usableFromInline var work: _Registration<Success, Failure>?
    @exclusivity(unchecked) @usableFromInline var interest: _Place?
    #if DEBUG
      /// The promise of the caller who came last, to tell a `start` that returned it (see `_begin`).
      @exclusivity(unchecked) @usableFromInline weak var lastJoined: ResultPromise<Success, Failure>?
    #endif
    @inlinable init(_ registry: SharedWork, _ key: Key, _ shared: ResultPromise<Success, Failure>) {
      self.registry = registry
      self.key = key
      self.shared = shared
    }
  }

  @usableFromInline let stopsWhenAllLeave: Bool
  /// The runs going on and wanted, by key.
  @exclusivity(unchecked) @usableFromInline var runs: [Key: _Run] = [:]

  #if canImport(Darwin)
    /// The registry's own lock, allocated with it.
    @usableFromInline let lock: UnsafeMutablePointer<pthread_mutex_t> = {
      let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
      pthread_mutex_init(lock, nil)
      return lock
    }()

    deinit {
      pthread_mutex_destroy(lock)
      lock.deallocate()
    }

    /// Runs `body` holding the registry's own lock.
    @inlinable func _withLock<T>(_ body: () -> T) -> T {
      pthread_mutex_lock(lock)
      defer { pthread_mutex_unlock(lock) }
      return body()
    }
  #else
    /// The registry's own lock: a word of its own, as a promise has.
    @usableFromInline let word = Atomic<UInt32>(0)

    /// Runs `body` holding the registry's own lock.
    @inlinable func _withLock<T>(_ body: () -> T) -> T { _Lock.withLock(word, body) }
  #endif

  /// Settles `run`'s promise like `work`, once `work` settles, and forgets the run then. The run counts as a
  /// dependent of `work` from now on.
  @inlinable func _begin(_ run: _Run, with work: ResultPromise<Success, Failure>) {
    #if DEBUG  // a promise that `promise(for:)` gave a caller of this very run, which would wait for itself
      if work === _withLock({ run.lastJoined }) {
        PromiseDiagnostics._report(work) {
          "is a SharedWork caller's promise, which start returned as the work of that caller's own run: the run "
            + "waits for itself and can never settle. start must return the work's own promise."
        }
      }
    #endif
    let record = work._extras as? _Cancellation
    let counted = record?.count(at: work._depth) == true
    // The observer holds the run alone, so that it needs no closure context of its own.
    let place = work._await { result in
      let (forgotten, interest) = run.registry._withLock {
        run.work = nil
        return (run.registry._remove(run.key, only: run), run.interest.take())
      }
      _ = consume forgotten
      _ = consume interest  // released after the lock: once settled, the run no longer asks anything of it
      run.shared.fulfil(with: result)
    }
    guard place != nil else { return }  // it has run
    // Kept even if `work` settles meanwhile: withdrawing from a settled promise does nothing, and letting go
    // of interest that was counted is right whenever it comes.
    let waiting = _Registration(work, at: place)
    _withLock {
      run.work = waiting
      if counted, let record { run.interest = (record, work._depth) }
    }
  }

  /// One caller of `run` has its outcome, however it came. The last to leave forgets the run, in the same
  /// critical section, and, with `stopsWhenAllLeave`, takes back the registry's observer on its promise and
  /// lets go of the run's interest in it, once: the work is asked to stop if nothing else wants it.
  @inlinable func _leave(_ run: _Run) {
    var forgotten: (key: Key, value: _Run)?
    var interest: _Place?
    let waiting: _Registration<Success, Failure>? = _withLock {
      run.callers -= 1
      guard run.callers == 0, stopsWhenAllLeave else { return nil }
      forgotten = _remove(run.key, only: run)
      interest = run.interest.take()
      return run.work.take()
    }
    _ = consume forgotten
    waiting?.withdraw()
    if let (record, depth) = interest { record.lettingGo(at: depth) }
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

// `@unchecked Sendable` where `Success` is: `runs`, and each run's counts and registrations, are read and
// written only under the registry's own lock; `stopsWhenAllLeave` and the lock never change. Where `Success` is
// not `Sendable`, the registry is not either: every caller gets the same value, so its callers must share one
// isolation domain.
nonisolated extension SharedWork: @unchecked Sendable where Success: Sendable {}
