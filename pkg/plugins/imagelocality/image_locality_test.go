package imagelocality

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestScore(t *testing.T) {
	const mb = 1024 * 1024
	infos := []*framework.NodeInfo{
		st.NodeInfo(st.MakeNode().Name("both").Image(300*mb, "app:1.0").Image(500*mb, "docker.io/library/db:latest").Obj()),
		st.NodeInfo(st.MakeNode().Name("app").Image(300*mb, "app:1.0").Obj()),
		st.NodeInfo(st.MakeNode().Name("none").Obj()),
	}
	snap := cache.NewSnapshot(infos...)
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]int64
	}{
		{name: "nodes with the image score by size spread over the nodes that have it", pod: st.MakePod().Name("p").Image("app:1.0").Obj(),
			want: map[string]int64{"both": 18, "app": 18, "none": 0}},
		{name: "an untagged image matches :latest", pod: st.MakePod().Name("p").Image("docker.io/library/db").Obj(),
			want: map[string]int64{"both": 14, "app": 0, "none": 0}},
		{name: "a short name does not match the registry-qualified name", pod: st.MakePod().Name("p").Image("db:latest").Obj(),
			want: map[string]int64{"both": 0, "app": 0, "none": 0}},
		{name: "an image volume counts in the sum and in the number of images", pod: st.MakePod().Name("p").Image("none:1").ImageVolume("models", "docker.io/library/db").Obj(),
			want: map[string]int64{"both": 7, "app": 0, "none": 0}}, // (500/3 - 23) / (2*1000 - 23) MiB
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: snap})
			got, status := st.RunScore(pl, tt.pod, infos...)
			if !status.IsSuccess() {
				t.Fatal(status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}
