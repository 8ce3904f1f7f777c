package scheduler

// MaxConcurrentBindings is the binding pool's size, for the tests.
const MaxConcurrentBindings = maxConcurrentBindings
