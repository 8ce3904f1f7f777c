package main

import (
	"math"
	"testing"
)

func TestFractionalBound(t *testing.T) {
	// c: 4 CPU 8 memory at 1; m: 4 CPU 16 memory at 1.5; r: 4 CPU 32 memory at 2.
	types := []boundType{{"c", 1, 4, 8}, {"m", 1.5, 4, 16}, {"r", 2, 4, 32}}
	for _, tc := range []struct {
		cpu, mem, want float64
	}{
		{40, 80, 10},  // c alone, both tight
		{40, 40, 10},  // c alone, CPU binds
		{40, 160, 15}, // m alone is 15; c+r: 10 CPU-nodes... c 8 + r 2 = 8+4 = 12
		{0, 320, 20},  // r alone
		{4, 8, 1},     // one c
		{0, 0, 0},     // nothing
	} {
		got, _ := fractionalBound(types, tc.cpu, tc.mem)
		want := tc.want
		if tc.cpu == 40 && tc.mem == 160 {
			// x c + y r: 4x+4y=40, 8x+32y=160 -> y=10/3, x=20/3: 20/3+20/3 = 13.33 < 15.
			want = 40.0 / 3
		}
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("cpu %g mem %g: bound %g, want %g", tc.cpu, tc.mem, got, want)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 15000: "15,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
