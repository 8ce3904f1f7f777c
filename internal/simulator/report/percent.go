package report

// The reports' percentages, of a part a of a whole b (b <= 0: 0). Every
// rendering of a quantity uses the same rounding, so that the table and
// the HTML page agree:
//   - a node's use (the node table, the HTML heat map's cells, the
//     comparison's zones) in whole percents rounded down, as kubectl
//     describe node writes its "Allocated resources": 100% means full,
//     and a node with room left never shows as full;
//   - the timeline's curves (the samples, the table's "at most" line,
//     the HTML curves' marks) to a tenth of a percent, rounded half up.

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
