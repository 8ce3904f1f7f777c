package config

import (
	"bytes"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

var (
	scheme = runtime.NewScheme()
	codecs serializer.CodecFactory
)

func init() {
	// Registering a scheme is pure data; it cannot fail for these types.
	if err := configv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
}

// LoadFile reads a KubeSchedulerConfiguration file. Unknown fields, wrong
// kinds and bad plugin args are errors that name the file.
func LoadFile(path string) (*configv1.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scheduler configuration: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Decode decodes a KubeSchedulerConfiguration strictly.
func Decode(data []byte) (*configv1.KubeSchedulerConfiguration, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("empty scheduler configuration")
	}
	dec := codecs.UniversalDeserializer()
	obj, gvk, err := dec.Decode(data, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) || runtime.IsMissingKind(err) || runtime.IsMissingVersion(err) {
			return nil, fmt.Errorf("not a KubeSchedulerConfiguration: want apiVersion %s and kind KubeSchedulerConfiguration: %w", configv1.SchemeGroupVersion, err)
		}
		return nil, fmt.Errorf("decoding KubeSchedulerConfiguration: %w", err)
	}
	want := configv1.SchemeGroupVersion.WithKind("KubeSchedulerConfiguration")
	cfg, ok := obj.(*configv1.KubeSchedulerConfiguration)
	if !ok || *gvk != want {
		return nil, fmt.Errorf("got %s, want %s", gvk, want)
	}
	if err := cfg.DecodeNestedObjects(dec); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ArgsKind is the kind of a plugin's args type, e.g. NodeResourcesFitArgs.
func ArgsKind(plugin string) schema.GroupVersionKind {
	return configv1.SchemeGroupVersion.WithKind(plugin + "Args")
}

// NewArgs returns a new, empty args object for a plugin, or nil when the
// plugin takes no args.
func NewArgs(plugin string) runtime.Object {
	obj, err := scheme.New(ArgsKind(plugin))
	if err != nil {
		return nil
	}
	return obj
}
