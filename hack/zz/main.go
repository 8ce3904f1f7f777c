package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func main() {
	runtime.MemProfileRate = 512
	c, err := simulator.Load([]string{os.Args[1]})
	if err != nil {
		panic(err)
	}
	cfg := &configv1.KubeSchedulerConfiguration{}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	w, err := simulator.NewWorld(context.Background(), c, cfg, plugins.NewInTreeRegistry(), 1)
	if err != nil {
		panic(err)
	}
	w.Run(context.Background())
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println("HeapAlloc MB", ms.HeapAlloc>>20)
	f, _ := os.Create(os.Args[2])
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
	runtime.KeepAlive(w)
}
