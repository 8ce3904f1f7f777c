package dynamicresources

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// side is one plugin with its manager and claims, fed the same steps as
// its twin.
type side struct {
	pl     *DynamicResources
	m      *Manager
	w      *recorder
	claims map[string]*resourceapi.ResourceClaim
}

// TestAllocationCacheChangesNoDecision runs random streams of pods (claims
// of three shapes, some from the same spec), bindings and releases through
// two plugins, the allocation cache on in one and off in the other, and
// compares every node's verdict and every allocation.
func TestAllocationCacheChangesNoDecision(t *testing.T) {
	const nodes, devices = 6, 3
	var nodeObjs []*v1.Node
	objs := []interface{}{
		st.DeviceClass("gpu", driver),
		st.DeviceClass("big", driver, `device.attributes["gpu.example.com"].model == "big"`),
	}
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		nodeObjs = append(nodeObjs, st.MakeNode().Name(name).Obj())
		s := st.MakeSlice(name, driver)
		for d := range devices {
			model := "small"
			if (i+d)%3 == 0 {
				model = "big"
			}
			s.Device(fmt.Sprintf("gpu-%d", d), "model", model)
		}
		objs = append(objs, s.Obj())
	}
	infos := st.NodeInfos(nodeObjs, nil)
	shapes := []func(*st.ClaimWrapper) *st.ClaimWrapper{
		func(c *st.ClaimWrapper) *st.ClaimWrapper { return c.Request("gpu", "gpu", 1) },
		func(c *st.ClaimWrapper) *st.ClaimWrapper { return c.Request("gpu", "gpu", 2) },
		func(c *st.ClaimWrapper) *st.ClaimWrapper { return c.FirstAvailable("gpu", "big", "gpu") },
	}
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		mk := func(cache bool) *side {
			l, err := framework.StaticListers(objs...)
			if err != nil {
				t.Fatal(err)
			}
			m := NewManager(l)
			m.SetCache(cache)
			if _, err := m.AllocatedState(); err != nil { // lists the claims: none yet
				t.Fatal(err)
			}
			w := newRecorder()
			pl, err := New(context.Background(), nil, st.FakeHandle{Objects: objs, DRA: m, Claims: w})
			if err != nil {
				t.Fatal(err)
			}
			return &side{pl: pl.(*DynamicResources), m: m, w: w, claims: map[string]*resourceapi.ResourceClaim{}}
		}
		on, off := mk(true), mk(false)
		var bound []string
		for step := range 40 {
			if len(bound) > 0 && rng.Intn(4) == 0 {
				// The resourceclaim controller deallocates a bound pod's claim.
				i := rng.Intn(len(bound))
				name := bound[i]
				bound = append(bound[:i], bound[i+1:]...)
				for _, s := range []*side{on, off} {
					cur := s.w.claims[name]
					freed := cur.DeepCopy()
					freed.Status.Allocation, freed.Status.ReservedFor = nil, nil
					s.m.OnClaimChange(cur, freed)
					s.w.claims[name] = freed
				}
				continue
			}
			name := fmt.Sprintf("c%d", step)
			claim := shapes[rng.Intn(len(shapes))](st.MakeClaim(name)).Obj()
			pod := st.MakePod().Name("p"+name).UID("p"+name).Namespace("default").Claim("gpu", name).Obj()
			var verdicts [2]map[string]string
			var devicesOf [2][]string
			for k, s := range []*side{on, off} {
				s.w.claims[name] = claim.DeepCopy()
				s.m.OnClaimChange(nil, claim)
				state, v := cycle(t, s.pl, pod, infos, "")
				verdicts[k] = v
				node := ""
				for _, ni := range infos {
					if v[ni.NodeName()] == "" {
						node = ni.NodeName()
						break
					}
				}
				if node == "" {
					continue
				}
				ctx := context.Background()
				if st := s.pl.Reserve(ctx, state, pod, node); !st.IsSuccess() {
					t.Fatalf("seed %d step %d: Reserve: %v", seed, step, st)
				}
				if st := s.pl.PreBind(ctx, state, pod, node); !st.IsSuccess() {
					t.Fatalf("seed %d step %d: PreBind: %v", seed, step, st)
				}
				written := s.w.claims[name]
				s.m.OnClaimChange(claim, written)
				for _, r := range written.Status.Allocation.Devices.Results {
					devicesOf[k] = append(devicesOf[k], r.Request+"="+r.Pool+"/"+r.Device)
				}
				if k == 0 {
					bound = append(bound, name)
				}
			}
			if diff := cmp.Diff(verdicts[1], verdicts[0]); diff != "" {
				t.Fatalf("seed %d step %d: verdicts with the cache (-off,+on):\n%s", seed, step, diff)
			}
			if diff := cmp.Diff(devicesOf[1], devicesOf[0]); diff != "" {
				t.Fatalf("seed %d step %d: devices with the cache (-off,+on):\n%s", seed, step, diff)
			}
		}
		if len(on.m.allocCache) == 0 {
			t.Errorf("seed %d: the cache was never filled: the comparison is vacuous", seed)
		}
	}
}
