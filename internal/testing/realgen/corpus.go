package realgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// DefaultCorpus is the repository's corpus of public manifests
// (internal/simulator/testdata/corpus), found from this file's place in
// the source tree: go run and go test in the repository find it.
func DefaultCorpus() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("internal", "simulator", "testdata", "corpus")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "simulator", "testdata", "corpus")
}

// readManifests decodes every document of the corpus file rel (a path
// under dir) into typed objects, a List's items one by one; kinds the
// client-go scheme does not know (custom resources) are left out.
func readManifests(dir, rel string) ([]kruntime.Object, error) {
	path := filepath.Join(dir, rel)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	decode := scheme.Codecs.UniversalDeserializer().Decode
	var out []kruntime.Object
	var add func(raw []byte, where string) error
	add = func(raw []byte, where string) error {
		obj, _, err := decode(raw, nil, nil)
		if kruntime.IsNotRegisteredError(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if l, ok := obj.(*corev1.List); ok {
			for i, it := range l.Items {
				if err := add(it.Raw, fmt.Sprintf("%s, item %d", where, i)); err != nil {
					return err
				}
			}
			return nil
		}
		if items, err := metaItems(obj); err == nil && items != nil {
			out = append(out, items...)
			return nil
		}
		out = append(out, obj)
		return nil
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		if len(bytes.TrimSpace(js)) == 0 || string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		if err := add(js, fmt.Sprintf("%s: document %d", path, doc)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// metaItems are the items of a typed List (DeploymentList...), each with
// its kind set from the List's; nil for an object that is no List.
func metaItems(obj kruntime.Object) ([]kruntime.Object, error) {
	if _, ok := obj.(metav1.ListInterface); !ok {
		return nil, nil
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		it.GetObjectKind().SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind[:len(gvk.Kind)-len("List")]))
	}
	return items, nil
}
