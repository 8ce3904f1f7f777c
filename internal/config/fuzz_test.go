package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
)

// FuzzLoadFile: whatever the file holds, loading, defaulting and
// validating it never panics, and a rejection names the file.
func FuzzLoadFile(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"))
	f.Add([]byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n          shape: [{utilization: 0, score: 10}]\n"))
	f.Add([]byte("kind: KubeSchedulerConfiguration\n"))
	f.Add([]byte("{}"))
	known := sets.New("PrioritySort", "NodeResourcesFit", "DefaultBinder", "NodeAffinity")
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadFile(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("rejection does not name the file: %v", err)
			}
			return
		}
		SetDefaults(cfg, known)
		for _, e := range Validate(cfg, known) {
			if e.Field == "" {
				t.Fatalf("validation error without a field: %v", e)
			}
		}
	})
}
