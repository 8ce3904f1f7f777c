//go:build tools

// Package integration pins the programs the harness builds: kube-apiserver,
// kube-scheduler and kube-controller-manager (the oracles) from
// k8s.io/kubernetes, and etcd (cmd/etcd).
package integration

import (
	_ "github.com/kubesched/kubesched/cmd/kubesched"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
