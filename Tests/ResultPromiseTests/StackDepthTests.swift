import ResultPromise
import Testing

extension LongChains {
  /// Semantics 5: long chains and cascades settle — and are released — in constant stack
  /// depth, on a thread with a 512 KiB stack.
  @Suite("Stack depth")
  struct StackDepthTests {
    static var length: Int { LongChains.length }

    /// The ways to add one step to a chain of `Int` promises that adds 1 on success.
    enum Step: String, CaseIterable, Sendable {
      case then, thenAsync, thenAsyncPending, map, mapThrowing, mapError, recover, recoverAsync, always
      case abandoningOnCancel, setFailureType, validate, compactMap, alwaysAsync

      func add(to promise: ResultPromise<Int, TestError>) -> ResultPromise<Int, TestError> {
        switch self {
        case .then: promise.then { .success($0 + 1) }
        case .thenAsync: promise.thenAsync { ResultPromise(value: $0 + 1) }
        case .thenAsyncPending:
          // The inner promise is still pending when adopted and is settled by an observer of its own.
          promise.thenAsync { value in
            let inner = ResultPromise<Int, TestError>()
            let trigger = ResultPromise<Int, TestError>()
            trigger.await { inner.fulfil(with: $0) }
            let adopted = ResultPromise<Int, TestError>().thenAsync { _ in inner }
            trigger.succeed(value + 1)
            return adopted.isPending ? inner : adopted
          }
        case .map: promise.map { $0 + 1 }
        case .mapThrowing: promise.map { (value: Int) throws(TestError) -> Int in value + 1 }
        case .mapError: promise.mapError { $0 }.map { $0 + 1 }
        case .recover: promise.recover { .failure($0) }.map { $0 + 1 }
        case .recoverAsync: promise.recoverAsync { ResultPromise(error: $0) }.map { $0 + 1 }
        case .always: promise.always { _ in }.map { $0 + 1 }
        case .abandoningOnCancel: promise.abandoningOnCancel(with: .boom).map { $0 + 1 }
        case .setFailureType:
          promise.recover { _ in Result<Int, Never>.success(-1) }
            .setFailureType(to: TestError.self).map { $0 + 1 }
        case .validate: promise.validate(else: .boom) { $0 >= 0 }.map { $0 + 1 }
        case .compactMap: promise.compactMap(else: .boom) { $0 + 1 }
        case .alwaysAsync: promise.alwaysAsync { _ in ResultPromise(value: ()) }.map { $0 + 1 }
        }
      }
    }

    @Test(
      "a long chain on a pending root settles in constant stack depth", arguments: Step.allCases)
    func pendingChain(step: Step) async {
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        let root = ResultPromise<Int, TestError>()
        var tail = root
        for _ in 0..<Self.length { tail = step.add(to: tail) }
        tail.await(result.append)
        root.succeed(0)
      }
      #expect(result.values == [.success(Self.length)])
    }

    @Test(
      "a long chain on a settled root settles in constant stack depth", arguments: Step.allCases)
    func settledChain(step: Step) async {
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        var tail = ResultPromise<Int, TestError>(value: 0)
        for _ in 0..<Self.length { tail = step.add(to: tail) }
        tail.await(result.append)
      }
      #expect(result.values == [.success(Self.length)])
    }

    @Test("a failure travels a long chain of recover steps in constant stack depth")
    func failureThroughRecoverChain() async {
      let result = Log<Result<Int, TestError>>()
      await onSmallStack {
        let root = ResultPromise<Int, TestError>()
        var tail = root
        for _ in 0..<Self.length / 2 {
          tail = tail.recover { .failure($0) }.recoverAsync { ResultPromise(error: $0) }
        }
        tail.await(result.append)
        root.fail(.boom)
      }
      #expect(result.values == [.failure(.boom)])
    }

    @Test(
      "a long cascade where each observer fulfils the next promise runs in constant stack depth")
    func cascade() async {
      let last = Log<Result<Int, TestError>>()
      await onSmallStack {
        let promises = (0...Self.length).map { _ in ResultPromise<Int, TestError>() }
        for index in 0..<Self.length {
          let next = promises[index + 1]
          promises[index].await { next.fulfil(with: $0.map { $0 + 1 }) }
        }
        promises[Self.length].await(last.append)
        promises[0].succeed(0)
      }
      #expect(last.values == [.success(Self.length)])
    }

    @Test("releasing a long pending chain does not overflow the stack", arguments: Step.allCases)
    func releasePendingChain(step: Step) async {
      let freed = Log<Bool>()
      await onSmallStack {
        weak var weakTail: ResultPromise<Int, TestError>?
        do {
          let root = ResultPromise<Int, TestError>()
          var tail = root
          for _ in 0..<Self.length { tail = step.add(to: tail) }
          weakTail = tail
          #expect(weakTail != nil)
        }
        freed.append(weakTail == nil)
      }
      #expect(freed.values == [true])
    }

    @Test("releasing a long settled chain does not overflow the stack")
    func releaseSettledChain() async {
      let freed = Log<Bool>()
      await onSmallStack {
        weak var weakRoot: ResultPromise<Int, TestError>?
        do {
          let root = ResultPromise<Int, TestError>()
          var chain = [root]
          chain.reserveCapacity(Self.length + 1)
          for _ in 0..<Self.length { chain.append(chain[chain.count - 1].map { $0 + 1 }) }
          root.succeed(0)
          weakRoot = root
        }
        freed.append(weakRoot == nil)
      }
      #expect(freed.values == [true])
    }

    /// A type only the cascade-release test uses, to count the broken-promise reports it causes.
    struct CascadeMarker: Sendable {}

    @Test("releasing a long pending cascade of hand-linked promises does not overflow the stack")
    func releasePendingCascade() async {
      BrokenPromiseReports.install()
      let freed = Log<Bool>()
      await onSmallStack {
        weak var weakLast: ResultPromise<CascadeMarker, TestError>?
        do {
          var head = ResultPromise<CascadeMarker, TestError>()
          weakLast = head
          for _ in 0..<Self.length {
            let next = head
            let previous = ResultPromise<CascadeMarker, TestError>()
            previous.await { next.fulfil(with: $0) }
            head = previous
          }
        }
        freed.append(weakLast == nil)
      }
      #expect(freed.values == [true])
      // Every hand-made promise had an observer waiting, so each is a broken promise (the last one had none).
      #expect(BrokenPromiseReports.mentioning("CascadeMarker").values.reduce(0, +) == Self.length)
    }
  }
}
