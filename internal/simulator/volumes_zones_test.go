package simulator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
)

// pairedZoneNodes are two nodes of 4 cpus per zone, "node-<zone>-1" and
// "node-<zone>-2", the second cordoned.
func pairedZoneNodes(zones ...string) string {
	var b strings.Builder
	for _, z := range zones {
		for i := 1; i <= 2; i++ {
			fmt.Fprintf(&b, "- {apiVersion: v1, kind: Node, metadata: {name: node-%[1]s-%[2]d, labels: {kubernetes.io/hostname: node-%[1]s-%[2]d, topology.kubernetes.io/zone: %[1]s}}, spec: {unschedulable: %[3]t}, status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}}\n", z, i, i == 2)
		}
	}
	return b.String()
}

// A StatefulSet on zonal disks (WaitForFirstConsumer), first on the
// first node of each zone, through the drain of those nodes (the second
// of each zone uncordoned), then the loss of a zone: every time one of its pods
// is bound, it is bound in the zone of its disk; after the drain each pod
// is back in its zone, after the zone's loss the pod of that zone waits.
func TestAStatefulSetThroughADrainAndAZoneLossKeepsItsPodsInTheirVolumesZones(t *testing.T) {
	items := pairedZoneNodes("zone-a", "zone-b", "zone-c") + class("standard-rwo", "pd.csi.storage.gke.io", "WaitForFirstConsumer", "") +
		strings.Replace(statefulSet("db", 3, "standard-rwo"), "spec: {containers:",
			"spec: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: db}}}], containers:", 1)
	steps := "  - {at: 10m, name: drain, uncordon: [node-zone-a-2, node-zone-b-2, node-zone-c-2], drain: [node-zone-a-1, node-zone-b-1, node-zone-c-1]}\n" +
		"  - {at: 20m, name: back, uncordon: [node-zone-a-1, node-zone-b-1, node-zone-c-1]}\n" +
		"  - {at: 30m, name: zone-loss, deleteNodes: [node-zone-a-1, node-zone-a-2]}\n" +
		"  - {at: 40m, name: end}\n"
	c := loadItems(t, items, steps, "")
	w := simtest.NewWorld(t, c, 1)
	var trace strings.Builder
	w.TraceTo(&trace)
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushTrace(); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	zoneOfPod := map[string]string{}
	for i := range 3 {
		_, pv := volumeOf(w, fmt.Sprintf("data-db-%d", i))
		if zoneOf(pv) == "" {
			t.Fatalf("data-db-%d has no zonal volume", i)
		}
		zoneOfPod[fmt.Sprintf("default/db-%d", i)] = zoneOf(pv)
	}
	binds := 0
	for _, l := range simtest.DecodeTrace(t, trace.String()) {
		zone, ok := zoneOfPod[l.Pod]
		if !ok || l.Result != report.TraceScheduled {
			continue
		}
		binds++
		if !strings.HasPrefix(l.Node, "node-"+zone+"-") {
			t.Errorf("%s at %s: %s bound to %s, its volume is in %s", l.T, l.Pod, l.Pod, l.Node, zone)
		}
	}
	if binds < 6 {
		t.Errorf("%d binds of db's pods, want 3 at the start and 3 after the drain at least", binds)
	}
	pods := map[string]report.PodResult{}
	for _, p := range w.Report().Pods {
		pods[p.Namespace+"/"+p.Name] = p
	}
	for k, zone := range zoneOfPod {
		p := pods[k]
		switch {
		case zone == "zone-a" && p.Status != report.StatusUnschedulable:
			t.Errorf("%s is %s on %q after zone-a's loss, want pending: its disk is in zone-a", k, p.Status, p.Node)
		case zone != "zone-a" && (p.Status != report.StatusScheduled || !strings.HasPrefix(p.Node, "node-"+zone+"-")):
			t.Errorf("%s is %s on %q, want running in %s", k, p.Status, p.Node, zone)
		}
	}
}
