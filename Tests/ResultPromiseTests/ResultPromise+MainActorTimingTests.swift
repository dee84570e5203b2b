import Dispatch
import ResultPromise
import Testing

/// `onMainActor.timeout`, on a clock and on a Dispatch timer: delivered on the main actor, decided when the
/// timer fires.
@Suite("Main-actor timing: onMainActor.timeout")
struct MainActorTimingTests {
  @Test("onMainActor.timeout fails on the main actor for a non-Sendable value, or passes it on in time")
  @MainActor func mainActorTimeout() async {
    let manual = ManualClock()
    let slow = ResultPromise<Model, TestError>()
    var seen: [String] = []
    slow.onMainActor.timeout(.seconds(10), failure: .boom, clock: manual)
      .await { result in seen.append("\(result.map(\.name)) on main: \(isOnMainQueue())") }
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(10))
    await waitOnMainActor { !seen.isEmpty }
    #expect(seen == ["failure(ResultPromiseTests.TestError.boom) on main: true"])

    let fast = ResultPromise<Model, TestError> { done in
      DispatchQueue.global().async { done(.success(Model(name: "ada"))) }
    }
    let name = await fast.onMainActor.timeout(.seconds(10), failure: .boom, clock: manual).map(\.name).result
    #expect(name == .success("ada"))
    await eventually("the cancelled timer leaves the clock") { manual.sleepers == 0 }
  }

  @Test(
    "onMainActor.timeout: once the timer has fired, a source settling on the main actor before the failure arrives there does not win"
  )
  @MainActor func mainActorTimeoutDecidedWhenTheTimerFires() async {
    let manual = ManualClock()
    let fired = DispatchSemaphore(value: 0)
    let source = ResultPromise<Model, TestError>()
    let timed = source.onMainActor.timeout(.seconds(10), failure: TestError.signalling(fired), clock: manual)
    await eventually { manual.sleepers == 1 }
    manual.advance(by: .seconds(10))
    // Hold the main actor, as busy app code would, until the timer has fired off it. The wait is on a
    // timer's task, not from the shared pool: the main thread is not one of its threads.
    // Two minutes: under a sanitizer, on two cores with CI's other checks beside, the timer's task once took
    // more than 30 s to be scheduled.
    #expect(fired.wait(timeout: .now() + 120) == .success, "the timer fired while the main actor was busy")
    #expect(source.succeed(Model(name: "late")))
    let result = await timed.map(\.name).result
    #expect(result == .failure(.boom))
  }

  @Test("onMainActor.timeout never evaluates failure when the source settles on the main actor first")
  @MainActor func mainActorFailureNotEvaluatedWhenSourceWins() async {
    let clock = GatedClock()
    let evaluated = Counter()
    let source = ResultPromise<Model, TestError>()
    let captured: Watched
    let timed: MainActorPromise<Model, TestError>
    do {
      let tracked = Tracked()
      captured = Watched(tracked)
      timed = source.onMainActor.timeout(
        .seconds(10), failure: TestError.counting(evaluated, tracked), clock: clock)
    }
    await eventually { clock.manual.sleepers == 1 }
    clock.manual.advance(by: .seconds(10))
    await eventually("the timer is past its deadline, held at the gate") { clock.woken == 1 }
    #expect(source.succeed(Model(name: "in time")))
    clock.open()
    await eventually("the timer has ended and released failure") { captured.isReleased }
    #expect(evaluated.value == 0)
    #expect(await timed.map(\.name).result == .success("in time"))
  }

  @Test("onMainActor.timeout on a Dispatch timer fails on the main actor, or passes the result on in time")
  @MainActor func mainActorTimeoutOnDispatch() async {
    let source = ResultPromise<Int, TestError>()
    var seen: [Result<Int, TestError>] = []
    source.onMainActor.timeout(.milliseconds(20) as DispatchTimeInterval, failure: .other(408))
      .await { seen.append($0) }
    await waitOnMainActor { !seen.isEmpty }
    #expect(seen == [.failure(.other(408))])
    let settled = ResultPromise<Int, TestError>(value: 5).onMainActor
      .timeout(.seconds(0) as DispatchTimeInterval, failure: .boom)
    #expect(await settled.result == .success(5))
  }
}
