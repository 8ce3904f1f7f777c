// Package config loads, defaults and validates a KubeSchedulerConfiguration
// (kubescheduler.config.k8s.io/v1). There is one version and no internal
// type: the v1 types of k8s.io/kube-scheduler are used throughout, and
// defaulting writes the upstream v1.37 defaults into them.
package config
