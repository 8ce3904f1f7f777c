package report

// The reports' percentages, of a part a of a whole b (b <= 0: 0). Two
// roundings are in use and both are kept, so that every output stays
// what it was: the timeline's curves to a tenth of a percent, rounded
// half up; the tables' and the comparison's whole percents, rounded
// down.

// PercentTenths is a/b in percent, rounded half up to a tenth.
func PercentTenths(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(int64(float64(a)*1000/float64(b)+0.5)) / 10
}

// PercentFloor is a/b in whole percent, rounded down (toward zero).
func PercentFloor(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return a * 100 / b
}
