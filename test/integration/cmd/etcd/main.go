// Command etcd is etcd's own server main, built from go.etcd.io/etcd/server/v3
// at the version Kubernetes 1.37 pins, so the integration tests need nothing
// but Go modules.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
