package podgrouppodscount

import (
	"context"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestScoreAndNormalize(t *testing.T) {
	pgi := &framework.PodGroupInfo{Namespace: "default", Name: "train"}
	proposed := func(n int) *framework.PodGroupAssignments {
		return &framework.PodGroupAssignments{ProposedAssignments: make([]framework.ProposedAssignment, n)}
	}
	tests := []struct {
		name      string
		scheduled int
		proposed  []int
		want      []int64
		wantErr   string
	}{
		{name: "the placement holding the most pods scores 100 and the others in proportion", proposed: []int{4, 2, 3}, want: []int64{100, 50, 75}},
		{name: "pods already scheduled count in every placement, narrowing the gaps", scheduled: 4, proposed: []int{4, 0}, want: []int64{100, 50}},
		{name: "no pod anywhere is an error", proposed: []int{0, 0}, wantErr: "no pods from pod group are assigned to any of the candidate placements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*v1.Pod
			for i := 0; i < tt.scheduled; i++ {
				pods = append(pods, st.MakePod().Obj())
			}
			pl := &PodGroupPodsCount{handle: st.FakeHandle{Groups: st.FakePodGroups{"default/train": {Scheduled: pods}}}}
			scores := make([]framework.PlacementScore, len(tt.proposed))
			for i, n := range tt.proposed {
				s, status := pl.ScorePlacement(context.Background(), pgi, proposed(n))
				if !status.IsSuccess() {
					t.Fatal(status)
				}
				scores[i].Score = s
			}
			status := pl.NormalizePlacementScores(context.Background(), pgi, scores)
			if tt.wantErr != "" {
				if status.Code() != framework.Error || status.Message() != tt.wantErr {
					t.Fatalf("status = %v, want %q", status, tt.wantErr)
				}
				return
			}
			var got []int64
			for _, s := range scores {
				got = append(got, s.Score)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("scores = %v, want %v", got, tt.want)
			}
		})
	}
}
