package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/kubesched/kubesched/cmd/kubesched/app"
)

func main() {
	runtime.MemProfileRate = 2048
	devnull, _ := os.Open(os.DevNull)
	old := os.Stdout
	os.Stdout = devnull
	cmd := app.NewCommand()
	cmd.SetArgs([]string{"simulate", "-f", os.Args[1], "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Stdout = old
	f, _ := os.Create(os.Args[2])
	pprof.Lookup("allocs").WriteTo(f, 0)
	f.Close()
}
