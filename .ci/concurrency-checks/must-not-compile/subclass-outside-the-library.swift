// expect: cannot inherit from non-open class 'ResultPromise<Int, ModelError>' outside of its defining module
// The library subclasses ResultPromise internally (a pending step is a subclass); clients cannot.
import ResultPromise

final class MyPromise: ResultPromise<Int, ModelError> {}
