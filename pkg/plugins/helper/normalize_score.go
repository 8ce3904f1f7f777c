// Package helper holds small pieces shared by plugins.
package helper

import (
	"github.com/kubesched/kubesched/pkg/framework"
)

// DefaultNormalizeScore scales scores to [0, maxPriority] by the highest
// score; reverse flips them (maxPriority - score). With all scores 0, every
// node gets maxPriority when reversed and 0 otherwise.
func DefaultNormalizeScore(maxPriority int64, reverse bool, scores framework.NodeScoreList) *framework.Status {
	var maxCount int64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = maxPriority
			}
		}
		return nil
	}
	for i := range scores {
		s := scores[i].Score
		s = maxPriority * s / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i].Score = s
	}
	return nil
}
