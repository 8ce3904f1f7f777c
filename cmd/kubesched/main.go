// Command kubesched is a Kubernetes pod scheduler with kube-scheduler's
// architecture, a cluster simulator and a placement explainer.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubesched/kubesched/cmd/kubesched/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, app.NewCommand(), os.Args[1:])
	stop()
	os.Exit(code)
}
