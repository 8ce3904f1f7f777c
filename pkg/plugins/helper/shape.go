package helper

// FunctionShapePoint is a point of a broken-linear scoring shape:
// utilization 0..100 to a node score 0..100.
type FunctionShapePoint struct{ Utilization, Score int64 }

// FunctionShape is a scoring shape, points in increasing utilization.
type FunctionShape []FunctionShapePoint

// ScoreAt is the shape's score for requested out of capacity, as
// upstream's helper.BuildBrokenLinearFunction over requested*100/capacity:
// nothing to count, or more requested than there is, is full utilization.
func (s FunctionShape) ScoreAt(requested, capacity int64) int64 {
	u := int64(100)
	if capacity != 0 && requested <= capacity {
		u = requested * 100 / capacity
	}
	for i, p := range s {
		if u <= p.Utilization {
			if i == 0 {
				return p.Score
			}
			prev := s[i-1]
			return prev.Score + (p.Score-prev.Score)*(u-prev.Utilization)/(p.Utilization-prev.Utilization)
		}
	}
	return s[len(s)-1].Score
}
