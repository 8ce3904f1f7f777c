package questions

import (
	"errors"
	"math/bits"
	"math/rand"
	"testing"
)

// threshold is a monotone fits: t nodes and more fit.
func threshold(t int) func(int) bool { return func(k int) bool { return k >= t } }

// checkFindsThreshold runs fewestFitting on the threshold's fits and
// checks its answer and that it simulated at most maxCalls counts, each
// in 1..room-1.
func checkFindsThreshold(t *testing.T, room, th, hint, maxCalls int, estimate func(int) int) {
	t.Helper()
	fits := threshold(th)
	calls := 0
	got, err := fewestFitting(room, hint, func(k int) (bool, error) {
		calls++
		if k <= 0 || k >= room {
			t.Errorf("asked about %d nodes, outside 1..%d (those are given)", k, room-1)
		}
		return fits(k), nil
	}, estimate)
	if err != nil {
		t.Fatal(err)
	}
	if got != th {
		t.Errorf("fewestFitting = %d, want %d", got, th)
	}
	if calls > maxCalls {
		t.Errorf("%d simulations, want at most %d", calls, maxCalls)
	}
}

func TestFewestFittingFindsTheThresholdFromAnyHint(t *testing.T) {
	bisection := bits.Len(uint(288)) // simulations a bisection of 1..288 takes at most
	tests := []struct {
		name      string
		room      int
		threshold int
		hint      int
		maxCalls  int
	}{
		{name: "without a hint it bisects", room: 288, threshold: 65, maxCalls: bisection},
		{name: "a hint at the threshold takes two simulations", room: 288, threshold: 65, hint: 65, maxCalls: 2},
		{name: "a hint a little above the threshold gallops down to it", room: 288, threshold: 65, hint: 70, maxCalls: 6},
		{name: "a hint a little below the threshold gallops up to it", room: 288, threshold: 65, hint: 60, maxCalls: 6},
		{name: "a hint far above the threshold still finds it", room: 288, threshold: 3, hint: 280, maxCalls: 2 * bisection},
		{name: "a hint far below a threshold at room still finds it", room: 288, threshold: 288, hint: 1, maxCalls: 2 * bisection},
		{name: "a hint equal to room is not one", room: 288, threshold: 65, hint: 288, maxCalls: bisection},
		{name: "a hint past room is not one", room: 10, threshold: 7, hint: 65, maxCalls: bits.Len(10)},
		{name: "a threshold of one node is found from a hint above it", room: 288, threshold: 1, hint: 5, maxCalls: 5},
		{name: "one node of room needs no simulation", room: 1, threshold: 1, hint: 1, maxCalls: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFindsThreshold(t, tt.room, tt.threshold, tt.hint, tt.maxCalls, nil)
		})
	}
}

func TestFewestFittingAnswersACountThatFitsWhereOneLessDoesNot(t *testing.T) {
	// Not monotone: 3 and 4 nodes fit, 5 to 9 do not, 10 and more do (a
	// spreading constraint can do that). Whatever the hint, the answer is a
	// count that fits with one less that does not.
	fits := func(k int) bool { return k == 3 || k == 4 || k >= 10 }
	for hint := 0; hint <= 20; hint++ {
		got, err := fewestFitting(20, hint, func(k int) (bool, error) { return fits(k), nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !fits(got) || fits(got-1) {
			t.Errorf("hint %d: fewestFitting = %d: fits(%d) = %v, fits(%d) = %v", hint, got, got, fits(got), got-1, fits(got-1))
		}
	}
}

func TestFewestFittingReturnsTheSimulationsError(t *testing.T) {
	boom := errors.New("simulation failed")
	for _, hint := range []int{0, 30, 70} {
		_, err := fewestFitting(288, hint, func(k int) (bool, error) {
			if k < 50 {
				return false, boom
			}
			return true, nil
		}, func(k int) int { return k + 1 })
		if !errors.Is(err, boom) {
			t.Errorf("hint %d: error %v, want %v", hint, err, boom)
		}
	}
}

func TestFewestFittingWithAnEstimateFindsTheThresholdInFewSimulations(t *testing.T) {
	bisection := bits.Len(uint(1000))
	exact := func(th int) func(int) int { return func(int) int { return th } }
	tests := []struct {
		name      string
		room      int
		threshold int
		hint      int
		estimate  func(th int) func(int) int
		maxCalls  int
	}{
		{name: "an exact guess after a hint below the threshold takes three simulations", room: 1000, threshold: 255, hint: 247, estimate: exact, maxCalls: 3},
		{name: "without a hint an exact guess follows the bisection's first miss", room: 1000, threshold: 255, estimate: exact, maxCalls: 4},
		{name: "a guess one short is followed by a bisection step and guessed again", room: 1000, threshold: 255, hint: 247,
			estimate: func(th int) func(int) int { return func(int) int { return th - 1 } }, maxCalls: 2 * bisection},
		{name: "guesses that creep up one count at a time cost a few bisections at most", room: 1000, threshold: 900, hint: 3,
			estimate: func(int) func(int) int { return func(k int) int { return k + 1 } }, maxCalls: 3 * bisection},
		{name: "guesses far past the threshold cost a few bisections at most", room: 1000, threshold: 40, hint: 5,
			estimate: func(int) func(int) int { return func(int) int { return 5000 } }, maxCalls: 3 * bisection},
		{name: "guesses below the count that failed are not followed", room: 1000, threshold: 700,
			estimate: func(int) func(int) int { return func(int) int { return 0 } }, maxCalls: 2 * bisection},
		{name: "a hint above the threshold gallops down as without an estimate", room: 1000, threshold: 255, hint: 256, estimate: exact, maxCalls: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFindsThreshold(t, tt.room, tt.threshold, tt.hint, tt.maxCalls, tt.estimate(tt.threshold))
		})
	}
}

// Whatever the guesses, the answer is the one a bisection finds.
func TestFewestFittingWithRandomEstimatesFindsTheThreshold(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for range 2000 {
		room := 2 + r.Intn(500)
		th := 1 + r.Intn(room)
		hint := r.Intn(room + 2)
		calls := 0
		got, err := fewestFitting(room, hint, func(k int) (bool, error) {
			calls++
			if k <= 0 || k >= room {
				t.Fatalf("room %d: asked about %d nodes", room, k)
			}
			return k >= th, nil
		}, func(k int) int { return k - 3 + r.Intn(2*room) })
		if err != nil {
			t.Fatal(err)
		}
		if got != th {
			t.Fatalf("room %d, threshold %d, hint %d: fewestFitting = %d", room, th, hint, got)
		}
		if limit := 4*bits.Len(uint(room)) + 2; calls > limit {
			t.Errorf("room %d, threshold %d, hint %d: %d simulations, more than %d", room, th, hint, calls, limit)
		}
	}
}
