package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

func TestKeptNodesFoldedByReasonShareARowWhenOnlyTheirNumbersDiffer(t *testing.T) {
	drained := func(node, total, gpu string) questions.KeptNode {
		return questions.KeptNode{Node: node, Pod: "ml/inference-" + node, Reason: "with the node drained, this pod would not schedule: 0/" + total +
			" nodes are available: " + gpu + " Insufficient nvidia.com/gpu."}
	}
	tests := []struct {
		name string
		keep []questions.KeptNode
		want []string
	}{
		{
			name: "reasons that count different numbers of nodes are one row",
			keep: []questions.KeptNode{drained("gpu-1", "1910", "163"), drained("gpu-2", "1731", "163"), drained("gpu-3", "1540", "12")},
			want: []string{"3      gpu-1        ml/inference-gpu-1  with the node drained, this pod would not schedule: 0/1910 nodes"},
		},
		{
			name: "reasons that differ in words are two rows, the larger first",
			keep: []questions.KeptNode{
				{Node: "a", Pod: "default/debug", Reason: "the pod has no controller"},
				drained("gpu-1", "10", "3"), drained("gpu-2", "9", "3"),
			},
			want: []string{"2      gpu-1", "1      a            default/debug"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			writeKept(streams{out: &out}, tt.keep, report.ExplainShowSummary)
			rows := 0
			for _, line := range strings.Split(out.String(), "\n")[1:] {
				if line == "" {
					break
				}
				rows++
			}
			if rows != len(tt.want) {
				t.Errorf("%d rows, want %d:\n%s", rows, len(tt.want), out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the table lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
