import Dispatch
import ResultPromise
import Testing

/// Semantics 26: every report names the call that made its promise — the initializer, operator, combinator
/// or timer — and, for a promise an operator made from another, where its chain began; a report made while
/// a report handler runs on the same thread is dropped; `always` results start heard.
///
/// Each case makes a promise on a known line (`#line` on the line of the call) from a source made in
/// `report(_:_:)`, fails the source with a failure tagged with the case's name, and drops what it made: the
/// one report of that tag must name the line. Debug builds only name places; an optimised build's report
/// names the type and the error and no place, which the same tests check there.
@Suite("26: every report says where")
struct ReportPlaceTests {
  typealias Source = ResultPromise<Int, Dropped>

  static let file = "ResultPromiseTests/ReportPlaceTests.swift"

  /// A promise-making call: `make` builds it from `source` and returns it with the line of the call.
  struct Case: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the promise continues the source's chain (a combinator begins a chain of its own).
    let continuesChain: Bool
    let make: @Sendable (Source) -> (AnyObject, Int)
    var testDescription: String { name }

    init(
      _ name: String, continuesChain: Bool = true, _ make: @escaping @Sendable (Source) -> (AnyObject, Int)
    ) {
      (self.name, self.continuesChain, self.make) = (name, continuesChain, make)
    }
  }

  static let cases: [Case] = [
    // The core.
    Case("then") { ($0.then { .success($0) }, #line) },
    Case("thenAsync") { ($0.thenAsync { Source(value: $0) }, #line) },
    Case("map") { ($0.map { $0 + 1 }, #line) },
    Case("map, typed throws") { ($0.map { (value: Int) throws(Dropped) in value }, #line) },
    Case("mapError") { ($0.mapError { $0 }, #line) },
    Case("recover") { ($0.recover { .failure($0) }, #line) },
    Case("recoverAsync") { ($0.recoverAsync { Source(error: $0) }, #line) },
    // Observing.
    Case("validate") { ($0.validate(else: Dropped("unused")) { _ in true }, #line) },
    Case("compactMap") { ($0.compactMap(else: Dropped("unused")) { $0 }, #line) },
    // Cancellation.
    Case("ignoringCancel") { ($0.ignoringCancel(), #line) },
    Case("abandoningOnCancel") { ($0.abandoningOnCancel(with: Dropped("unused")), #line) },
    // Combining.
    Case("all", continuesChain: false) { (Source.all([$0]), #line) },
    Case("any", continuesChain: false) { (Source.any([$0]).mapError { $0.errors[0] }, #line) },
    Case("race", continuesChain: false) { (Source.race([$0]), #line) },
    Case("zip", continuesChain: false) { (ResultPromise.zip($0, Source(value: 1)), #line) },
    Case("all, concurrently", continuesChain: false) { source in
      (Source.all([{ source }], concurrently: 1), #line)
    },
    // Timing (a failure passes `delay` at once; a source that settles wins over `timeout`).
    Case("delay") { ($0.delay(.seconds(60)), #line) },
    Case("delay on Dispatch") { ($0.delay(DispatchTimeInterval.seconds(60)), #line) },
    Case("timeout") { ($0.timeout(.seconds(60), failure: Dropped("unused")), #line) },
    Case("timeout on Dispatch") {
      ($0.timeout(DispatchTimeInterval.seconds(60), failure: Dropped("unused")), #line)
    },
    Case("retry", continuesChain: false) { source in (Source.retry(attempts: 1) { source }, #line) },
    // Sharing.
    Case("SharedWork", continuesChain: false) { source in
      (SharedWork<Int, Int, Dropped>().promise(for: 0, leaving: Dropped("unused")) { _ in source }, #line)
    },
  ]

  /// The reports of the failure a promise made by `make` from a failing source brought, once it is dropped;
  /// and the line the source was made on.
  func report(_ tag: String, _ make: (Source) -> (AnyObject, Int)) -> (
    reports: [String], made: Int, source: Int
  ) {
    UnheardFailures.install()
    let source = Source()
    let sourceLine = #line - 1
    var (made, line): (AnyObject?, Int) = make(source)
    source.fail(Dropped(tag))
    made = nil
    #expect(made == nil)
    return (UnheardFailures.messages(tag), line, sourceLine)
  }

  @Test(
    "a failure nobody heard names the call that made its promise, and where its chain began", arguments: cases
  )
  func unheardFailureNamesTheCall(_ call: Case) {
    check(call.name, continuesChain: call.continuesChain, call.make)
  }

  /// Makes a promise with `make`, drops it, and checks its one report.
  func check(
    _ name: String, continuesChain: Bool, _ make: (Source) -> (AnyObject, Int),
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let tag = "where.\(name)"
    let (reports, line, sourceLine) = report(tag, make)
    #expect(reports.count == 1, sourceLocation: sourceLocation)
    let message = reports.first ?? ""
    #expect(message.hasPrefix("ResultPromise<"), sourceLocation: sourceLocation)
    #expect(
      message.hasSuffix("failed with ResultPromiseTests.Dropped(tag: \"\(tag)\"), and nothing heard it."),
      sourceLocation: sourceLocation)
    #if DEBUG
      #expect(message.contains(" made at \(Self.file):\(line)"), sourceLocation: sourceLocation)
      let began = " (its chain began at \(Self.file):\(sourceLine))"
      #expect(message.contains(began) == continuesChain, sourceLocation: sourceLocation)
    #else
      #expect(
        !message.contains(" made at "), "an optimised build keeps no place", sourceLocation: sourceLocation)
    #endif
  }

  @Test("a settled promise made by an initializer names the initializer's line, and no chain")
  func initializersNameTheirLine() {
    UnheardFailures.install()
    var lines: [Int] = []
    do {
      lines.append(#line + 1)
      _ = Source(error: Dropped("where.init(error:)"))
      lines.append(#line + 1)
      _ = Source(.failure(Dropped("where.init(_:)")))
      lines.append(#line + 1)
      _ = Source(catching: { () throws(Dropped) in throw Dropped("where.init(catching:)") })
      lines.append(#line + 1)
      _ = Source { done, _ in done(.failure(Dropped("where.init(onCancel)"))) }
      lines.append(#line + 1)
      _ = ResultPromise<Int, Dropped>(
        { done in done(nil, Dropped("where.completion")) }, mapError: { $0 as! Dropped })
    }
    let tags = ["init(error:)", "init(_:)", "init(catching:)", "init(onCancel)", "completion"]
    for (tag, line) in zip(tags, lines) {
      let reports = UnheardFailures.messages("where.\(tag)")
      #expect(reports.count == 1, "\(tag)")
      #if DEBUG
        #expect(reports.first?.contains(" made at \(Self.file):\(line) failed with") == true, "\(reports)")
      #else
        #expect(reports.first?.contains(" made at ") == false, "\(tag)")
      #endif
    }
  }

  struct UncalledMarker: Sendable {}

  @Test("a completion handler released uncalled is reported with the line of the initializer that made it")
  func uncalledCompletionHandlerNamesTheCall() {
    BrokenPromiseReports.install()
    let line = #line + 1
    var promise: ResultPromise<UncalledMarker, AppError>? = ResultPromise(
      { (_: @escaping @Sendable (UncalledMarker?, (any Error)?) -> Void) in }, mapError: { _ in .offline })
    promise?.await { _ in }
    promise = nil
    let reports = BrokenPromiseReports.mentioning("UncalledMarker")
    #expect(reports.values.reduce(0, +) == 1)
    #if DEBUG
      #expect(
        reports.keys.first?.contains(" made at \(Self.file):\(line) is pending, but its fulfil") == true)
    #endif
  }

  @Test("a promise made by receive(on:) names its line once the queue has delivered its failure")
  func receiveOnNamesItsLine() {
    let queue = DispatchQueue(label: "ReportPlaceTests.receive")
    let (reports, line, _) = report("where.receive(on:)") { ($0.receive(on: queue), #line) }
    queue.sync {}  // the delivery ran and let go of the promise
    #expect(reports.count <= 1)
    let all = UnheardFailures.messages("where.receive(on:)")
    #expect(all.count == 1)
    #if DEBUG
      #expect(all.first?.contains(" made at \(Self.file):\(line) (its chain began at ") == true)
    #endif
  }

  @Test("a promise made from an async operation names its line once its task has let go of it")
  func asyncOperationNamesItsLine() async {
    UnheardFailures.install()
    let tag = "where.init(priority:operation:)"
    _ = Source { () async throws(Dropped) -> Int in throw Dropped(tag) }
    let line = #line - 1
    while UnheardFailures.messages(tag).isEmpty { await Task.yield() }
    #expect(UnheardFailures.messages(tag).count == 1)
    #if DEBUG
      #expect(UnheardFailures.messages(tag).first?.contains(" made at \(Self.file):\(line) failed") == true)
    #endif
  }

  // MARK: The main-actor view

  @Test("on the main-actor view, a failure nobody heard names the call that made its promise")
  @MainActor func viewNamesTheCall() {
    check("view then", continuesChain: true) { ($0.onMainActor.then { .success($0) }.promise, #line) }
    check("view thenAsync", continuesChain: true) {
      ($0.onMainActor.thenAsync { Source(value: $0) }.promise, #line)
    }
    check("view map", continuesChain: true) { ($0.onMainActor.map { $0 + 1 }.promise, #line) }
    check("view mapError", continuesChain: true) { ($0.onMainActor.mapError { $0 }.promise, #line) }
    check("view recover", continuesChain: true) { ($0.onMainActor.recover { .failure($0) }.promise, #line) }
    check("view recoverAsync", continuesChain: true) {
      ($0.onMainActor.recoverAsync { Source(error: $0) }.promise, #line)
    }
    check("view validate", continuesChain: true) {
      ($0.onMainActor.validate(else: Dropped("unused")) { _ in true }.promise, #line)
    }
    check("view compactMap", continuesChain: true) {
      ($0.onMainActor.compactMap(else: Dropped("unused")) { $0 }.promise, #line)
    }
    check("view abandoningOnCancel", continuesChain: true) {
      ($0.onMainActor.abandoningOnCancel(with: Dropped("unused")).promise, #line)
    }
    check("view timeout", continuesChain: true) {
      ($0.onMainActor.timeout(.seconds(60), failure: Dropped("unused")).promise, #line)
    }
  }

  // MARK: always starts heard

  @Test(
    "the promise always and alwaysAsync return starts heard: failed by hand and dropped while its input is pending, it is not reported (both views)"
  )
  @MainActor func alwaysStartsHeard() {
    UnheardFailures.install()
    let made: [(String, (Source) -> ResultPromise<Int, Dropped>)] = [
      ("always", { $0.always { _ in } }),
      ("alwaysAsync", { $0.alwaysAsync { _ in ResultPromise(value: ()) } }),
      ("view always", { $0.onMainActor.always { _ in }.promise }),
      ("view alwaysAsync", { $0.onMainActor.alwaysAsync { _ in ResultPromise(value: ()) }.promise }),
    ]
    for (name, make) in made {
      // An input that never settles and, not made by hand, is not reported when dropped: an empty race.
      make(Source.race([])).fail(Dropped("heard.\(name)"))
      #expect(UnheardFailures.messages("heard.\(name)").isEmpty, "\(name)")
    }
  }

  // MARK: A handler that drops a failing promise

  @Test("a failure dropped inside the report handler is not reported (nor nested); the next report is")
  func reportInsideTheHandlerIsDropped() {
    UnheardFailures.install()
    // The recording handler drops a failing promise of its own for a report tagged "nest." (Support.swift).
    _ = Source(error: Dropped("nest.outer"))
    #expect(UnheardFailures.messages("nest.outer").count == 1)
    #expect(
      UnheardFailures.messages("nested.nest.outer").isEmpty, "made while the handler ran on this thread")
    _ = Source(error: Dropped("nest.after"))
    #expect(
      UnheardFailures.messages("nest.after").count == 1, "the thread reports again once the handler returned")
  }

  @Test("a report made on another thread while a handler runs is not dropped")
  func reportOnAnotherThreadWhileAHandlerRuns() {
    UnheardFailures.install()
    // The handler, for a report tagged "other.", drops a failing promise on another thread and waits for it.
    _ = Source(error: Dropped("other.outer"))
    #expect(UnheardFailures.messages("other.outer").count == 1)
    #expect(UnheardFailures.messages("elsewhere.other.outer").count == 1)
  }
}
