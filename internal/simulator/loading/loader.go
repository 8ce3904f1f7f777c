package loading

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/gcpace"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// LoadError names the file, the document and the field of bad input:
//
//	FILE: document N[, item M] (KIND NAMESPACE/NAME): FIELD: MESSAGE
//
// the one format of the errors about loaded objects (SourceError is the
// same for an object known by its source).
type LoadError struct {
	File     string
	Document int    // 1-based index of the YAML document
	Item     int    // 1-based index in a List, 0 if none
	Object   string // Kind namespace/name when known
	Field    string
	Msg      string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(location(e.File, e.Document))
	if e.Item > 0 {
		fmt.Fprintf(&b, ", item %d", e.Item)
	}
	if e.Object != "" {
		fmt.Fprintf(&b, " (%s)", e.Object)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// location is where an object was read: "file: document N", the start
// of errors and the objects' sources.
func location(file string, doc int) string {
	return fmt.Sprintf("%s: document %d", file, doc)
}

// SourceError is an error about an object read at source (a
// cluster.Cluster.Sources value, or a Workload's or Scenario's Source),
// in LoadError's format: err's message is "field: message".
func SourceError(source, object string, err error) error {
	if source == "" {
		return fmt.Errorf("%s: %w", object, err)
	}
	return fmt.Errorf("%s (%s): %w", source, object, err)
}

// Load reads files and folders of .yaml, .yml and .json manifests; "-"
// is the standard input.
func Load(paths []string) (*cluster.Cluster, error) {
	return LoadFrom(paths, os.Stdin)
}

// StdinName names the standard input in errors and sources.
const StdinName = "<stdin>"

// LoadFrom is Load with "-" read from stdin.
func LoadFrom(paths []string, stdin io.Reader) (*cluster.Cluster, error) {
	return LoadWith(paths, stdin, Options{})
}

// Options are what the feature gates change in what the controllers make
// of the input.
type Options struct {
	// JobPodGroups: the WorkloadWithJob gate (cluster.Cluster.JobPodGroups).
	JobPodGroups bool
	// Namespace is the namespace of namespaced objects that name none
	// (kubectl apply -n); empty: default.
	Namespace string
	// DefaultStorageClass is the class of claims without one when no
	// StorageClass read is marked the default (--default-storage-class).
	DefaultStorageClass string
	// HPAs says what the HorizontalPodAutoscalers make of their targets'
	// replicas (cluster.HPABounds, the HPA controller's bounds; or
	// cluster.HPAMax, the what-if of every HPA scaled out).
	HPAs cluster.HPAReplicas
	// Documents, when set, keeps each file's documents as JSON for the
	// loads after the first (the questions that load the cluster once
	// per simulation): they skip reading and converting the YAML.
	Documents *Documents
}

// LoadWith is LoadFrom with options.
func LoadWith(paths []string, stdin io.Reader, opts Options) (*cluster.Cluster, error) {
	// Decoding is nearly all allocation of objects that stay: the collector
	// runs less often meanwhile (unless GOGC says otherwise, or the
	// command's starting heap has it off), and the memory it leaves is
	// reused by the simulation.
	defer gcpace.Loading()()
	l := &loader{c: cluster.New(), read: map[string]int{}, docs: opts.Documents, namespace: opts.Namespace}
	readStdin := false
	for _, p := range paths {
		if p == "-" {
			if readStdin {
				return nil, fmt.Errorf("-f -: the standard input can be read only once")
			}
			readStdin = true
			if err := l.load(StdinName, stdin); err != nil {
				return nil, err
			}
			continue
		}
		files, err := l.docs.manifestFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := l.loadFile(f); err != nil {
				return nil, err
			}
		}
	}
	if err := l.nothingToSimulate(); err != nil {
		return nil, err
	}
	l.dropOrphans()
	l.c.JobPodGroups = opts.JobPodGroups
	l.c.ApplyHPAs(opts.HPAs)
	l.c.RunControllers()
	defaultStorage(l.c, opts.DefaultStorageClass)
	if len(l.c.ControllerErrors) > 0 {
		return nil, l.c.ControllerErrors[0]
	}
	if err := applyDefaults(l.c); err != nil {
		return nil, err
	}
	return l.c, nil
}

// loader reads files into a cluster.
type loader struct {
	c *cluster.Cluster
	// apply files the objects read, a later one of the same kind,
	// namespace and name in place of the earlier.
	apply *cluster.Applier
	// namespace is -n (Options.Namespace), "" when not given.
	namespace string
	// hooks counts the Helm test hooks left out.
	hooks int
	// intern shares equal resource lists between the loaded objects.
	intern *interner
	// files are the files read, in order; read counts the objects of the
	// kinds the simulator reads, by kind (a Scenario included).
	files []string
	read  map[string]int
	// docs keeps the files' documents between loads (Options.Documents).
	docs *Documents
}

// explainAnnotation is questions.PendingAnnotation (questions imports
// this package): it marks the pod to explain, which is never bound.
const explainAnnotation = "kubesched.io/pending"

// nothingToSimulate refuses input with no Node, no Pod, no workload and
// no Scenario, saying what it held: no document at all (empty files,
// comments), or only objects the simulator does not simulate.
func (l *loader) nothingToSimulate() error {
	c := l.c
	workloads := len(c.Deployments) + len(c.ReplicaSets) + len(c.StatefulSets) + len(c.RCs) + len(c.DaemonSets) + len(c.Jobs)
	if len(c.Nodes) > 0 || len(c.Pods) > 0 || workloads > 0 || c.Scenario != nil {
		return nil
	}
	from := strings.Join(l.files, ", ")
	if len(l.read) == 0 && len(c.Skipped) == 0 && l.hooks == 0 {
		return fmt.Errorf("nothing was read from %s: no documents (empty, or only comments)", from)
	}
	var held []string
	if len(l.read) > 0 {
		held = append(held, describeCounts(l.read))
	}
	if len(c.Skipped) > 0 {
		held = append(held, describeCounts(c.Skipped)+" of kinds the simulator does not read")
	}
	if l.hooks > 0 {
		held = append(held, fmt.Sprintf("%d Helm test hook(s), left out", l.hooks))
	}
	verb := "holds"
	if len(l.files) > 1 {
		verb = "hold"
	}
	return fmt.Errorf("nothing to simulate: %s %s no Node, Pod, workload or Scenario, only %s", from, verb, strings.Join(held, "; "))
}

// describeCounts is "2 ConfigMap, 1 Secret", kinds sorted.
func describeCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// dropOrphans leaves out, with a warning, the pods bound to a node the
// input does not hold. The API server takes such a pod, but no kubelet
// runs it, and the pod garbage collector (pkg/controller/podgc's
// gcOrphaned) marks it Failed and deletes it once the node is still
// missing after its 40 s quarantine: the simulation starts from that
// cluster, where the pod is gone and its controller, if any, replaces it.
//
// The pod explain is to explain (annotated kubesched.io/pending: "true")
// stays: it is not bound, its nodeName is a constraint to explain.
func (l *loader) dropOrphans() {
	nodes := make(map[string]bool, len(l.c.Nodes))
	for _, n := range l.c.Nodes {
		nodes[n.Name] = true
	}
	kept := l.c.Pods[:0]
	for _, p := range l.c.Pods {
		if p.Spec.NodeName == "" || nodes[p.Spec.NodeName] || p.Annotations[explainAnnotation] == "true" {
			kept = append(kept, p)
			continue
		}
		k := cluster.PodKey(p)
		l.c.Warnings = append(l.c.Warnings, SourceError(l.c.Sources[k], "Pod "+k, fmt.Errorf(
			"spec.nodeName: Not found: %q: no such Node in the input; left out: no kubelet runs the pod and the pod garbage collector deletes it (its controller, if any, replaces it)",
			p.Spec.NodeName)).Error())
		delete(l.c.Sources, k)
	}
	clear(l.c.Pods[len(kept):])
	l.c.Pods = kept
}

// LoadPod reads the one Pod of a file ("-": stdin) as part of the
// cluster: its priorityClassName resolves against the cluster's
// PriorityClasses, as admission would. namespace is -n
// (Options.Namespace): a pod naming none is in it, and one naming another
// is refused, as the cluster's files.
func LoadPod(c *cluster.Cluster, path string, stdin io.Reader, namespace string) (*v1.Pod, error) {
	l := &loader{c: cluster.New(), namespace: namespace}
	pc := l.c
	var err error
	if path == "-" {
		err = l.load(StdinName, stdin)
	} else {
		err = l.loadFile(path)
	}
	if err != nil {
		return nil, err
	}
	if len(pc.Pods) != 1 {
		return nil, fmt.Errorf("%s: want exactly one Pod, found %d", path, len(pc.Pods))
	}
	pc.PriorityClasses = append(c.PriorityClasses, pc.PriorityClasses...)
	if err := applyDefaults(pc); err != nil {
		return nil, err
	}
	return pc.Pods[0], nil
}

// manifestFiles expands a path to the manifest files it names: itself,
// or a folder's .yaml, .yml and .json files, sorted.
func manifestFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				out = append(out, path)
			}
		}
		return nil
	})
	sort.Strings(out)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no .yaml, .yml or .json files", p)
	}
	return out, err
}

func (l *loader) loadFile(path string) error {
	if docs, ok := l.docs.get(path); ok {
		return l.decodeDocuments(path, docs, false, nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return l.loadBytes(path, data)
}

func (l *loader) load(path string, in io.Reader) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return &LoadError{File: path, Document: 1, Msg: err.Error()}
	}
	return l.loadBytes(path, data)
}

func (l *loader) loadBytes(path string, data []byte) error {
	split, readErr := splitDocuments(path, data)
	docs := make([]document, len(split))
	for i, d := range split {
		docs[i].json = d
	}
	if err := l.decodeDocuments(path, docs, true, readErr); err != nil {
		return err
	}
	if readErr == nil && path != StdinName {
		l.docs.put(path, docs) // decodeDocuments made them JSON
	}
	return nil
}

// decodeDocuments decodes a file's documents (JSON or YAML; with fresh,
// each is made JSON in place: the kept documents are only read) into the
// cluster; readErr is the error that ended the file's read, returned once
// the documents before it are added.
func (l *loader) decodeDocuments(path string, docs []document, fresh bool, readErr error) error {
	l.files = append(l.files, path)
	// Documents decode in parallel and are added in file order, so the
	// result and the first error reported are those of a sequential read.
	results := make([]decoded, len(docs))
	if l.intern == nil {
		l.intern = newInterner()
	}
	for i := range results {
		results[i].in, results[i].namespace = l.intern, l.namespace
	}
	if l.apply == nil {
		l.apply = l.c.NewApplier()
	}
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(docs), func(i int) {
		results[i].err = decodeDocument(path, i+1, 0, docs[i].json, docs[i].valid, &results[i])
		if fresh {
			docs[i].json, docs[i].valid = results[i].json, results[i].valid
		}
	})
	for i := range results {
		if results[i].err != nil {
			return results[i].err
		}
		for _, kind := range results[i].skipped {
			l.c.Skipped[kind]++
		}
		l.hooks += results[i].hooks
		l.c.Warnings = append(l.c.Warnings, results[i].warnings...)
		if sc := results[i].scenario; sc != nil {
			if l.c.Scenario != nil {
				return &LoadError{File: path, Document: i + 1, Object: cluster.ScenarioKind + " " + sc.Name,
					Msg: fmt.Sprintf("a second Scenario: simulate replays one (the first is %s)", l.c.Scenario.Source)}
			}
			l.c.Scenario = sc
		}
		source := location(path, i+1) // one string for a document's objects
		for j, obj := range results[i].objs {
			at := cluster.Place{Source: source}
			if results[i].items != nil {
				at.Item = results[i].items[j]
			}
			if prev, replaced := l.apply.Apply(at, obj); replaced {
				l.c.Warnings = append(l.c.Warnings, replacedNote(at, prev, obj))
			}
			if l.read != nil {
				l.read[obj.GetObjectKind().GroupVersionKind().Kind]++
			}
		}
		if sc := results[i].scenario; sc != nil && l.read != nil {
			l.read[cluster.ScenarioKind]++
		}
	}
	return readErr
}

// replacedNote is the warning about obj, read at at, that replaces the
// object of its kind, namespace and name read at prev: kubectl apply -f
// of the files in order creates the first and applies the second over it,
// so the last one read stands (Cluster.Applier).
func replacedNote(at, prev cluster.Place, obj runtime.Object) string {
	desc := obj.GetObjectKind().GroupVersionKind().Kind
	if m, ok := obj.(metav1.Object); ok {
		desc += " " + strings.TrimPrefix(m.GetNamespace()+"/"+m.GetName(), "/")
	}
	return SourceError(at.String(), desc, fmt.Errorf(
		"replaces the one read at %s (kubectl apply -f of the files in order leaves the last one)",
		prev)).Error()
}

// splitDocuments splits a file into its YAML documents (utilyaml's
// YAMLReader: "---" lines). A file that is one JSON document (no line
// starts with "---", which JSON can't hold) is that document, without
// the line-by-line read: kubectl's -o json writes a whole List on one
// line, which the reader would grow a buffer through.
func splitDocuments(path string, data []byte) (docs [][]byte, readErr error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' && !bytes.HasPrefix(data, []byte("---")) && !bytes.Contains(data, []byte("\n---")) {
		return [][]byte{data}, nil
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for doc := 1; ; doc++ {
		data, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = &LoadError{File: path, Document: doc, Msg: err.Error()}
			break
		}
		if isEmptyDocument(data) {
			doc--
			continue
		}
		docs = append(docs, data)
	}
	return docs, readErr
}

// decoded is what one document holds: objects of kinds the simulator
// reads, in order, and the kinds of the others.
type decoded struct {
	// in shares equal resource lists between the objects (nil: not).
	in   *interner
	objs []runtime.Object
	// items are the objects' indexes in a List (1-based), nil if the
	// document is no List.
	items   []int
	skipped []string
	// hooks counts the Helm test hooks left out (each with a warning).
	hooks int
	// warnings are about objects taken as they are, that the input
	// probably did not mean (cluster.Cluster.Warnings).
	warnings []string
	// namespace is -n (Options.Namespace), "" if not given; itemKind and
	// itemAPIVersion are a typed List's (DeploymentList's: Deployment,
	// apps/v1), the kind and apiVersion of its items that name none.
	namespace, itemKind, itemAPIVersion string

	scenario *cluster.Scenario
	err      error
	// json is the document as JSON (converted from YAML), valid whether
	// it is known valid JSON, for Documents.
	json  []byte
	valid bool
}

func isEmptyDocument(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			return false
		}
	}
	return true
}

func decodeDocument(path string, doc, item int, data []byte, valid bool, out *decoded) error {
	lerr := func(obj, fieldPath, msg string) error {
		return &LoadError{File: path, Document: doc, Item: item, Object: obj, Field: fieldPath, Msg: msg}
	}
	js := data
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		// YAML (JSON is YAML too, but converting it is a waste).
		// The common block style converts fast; the rest, and every
		// error, through sigs.k8s.io/yaml (fastyaml.go).
		var ok bool
		if js, ok = fastYAMLToJSON(data); !ok {
			var err error
			if js, err = yaml.YAMLToJSON(data); err != nil {
				return lerr("", "", "malformed YAML: "+err.Error())
			}
		}
		valid = true
	}
	if item == 0 {
		out.json, out.valid = js, valid
	}
	// The head (kind, name, a List's items) is read first: a List (kubectl
	// get -o json|yaml) is split into its items without building the
	// whole tree, and the items decode in parallel. An object of a kind we
	// read is then decoded into its type once; it is parsed generically
	// only when a quantity is bad, to name its field.
	if t := bytes.TrimSpace(js); len(t) == 0 || t[0] != '{' {
		var u map[string]interface{}
		if err := json.Unmarshal(js, &u); err != nil {
			return lerr("", "", "not a Kubernetes object: "+err.Error())
		}
		return lerr("", "kind", "Required value") // null
	}
	// valid: the caller knows js is valid JSON (a List's item).
	h, ok := jsonHead{}, false
	if valid || json.Valid(js) {
		h, ok = scanHead(js)
	}
	if !ok {
		var head struct {
			Kind, APIVersion interface{}
			Metadata         struct{ Name, Namespace interface{} }
			Items            json.RawMessage
		}
		// A field of an unexpected type (metadata: "x") is left empty, as
		// the checks below expect; only malformed JSON fails here.
		var typeErr *json.UnmarshalTypeError
		if err := json.Unmarshal(js, &head); err != nil && !errors.As(err, &typeErr) {
			return lerr("", "", "not a Kubernetes object: "+err.Error())
		}
		h.kind, _ = head.Kind.(string)
		h.apiVersion, _ = head.APIVersion.(string)
		h.name, _ = head.Metadata.Name.(string)
		h.namespace, _ = head.Metadata.Namespace.(string)
		h.items = head.Items
	}
	// A typed List's items may leave out their kind and apiVersion: the
	// List's are theirs.
	kind, apiVersion := h.kind, h.apiVersion
	typeless := false
	if kind == "" && out.itemKind != "" {
		kind, typeless = out.itemKind, true
	}
	if apiVersion == "" && out.itemAPIVersion != "" {
		apiVersion, typeless = out.itemAPIVersion, true
	}
	if kind == "" {
		return lerr("", "kind", "Required value")
	}
	if apiVersion == "" {
		return lerr("", "apiVersion", "Required value")
	}
	if isList(kind, apiVersion, h.items) {
		return decodeList(path, doc, kind, apiVersion, h.items, out)
	}
	if kind == cluster.ScenarioKind && item == 0 {
		sc, err := decodeScenario(path, doc, js, out.namespace)
		out.scenario = sc
		return err
	}
	rk, reads := readKindOf(apiVersion, kind)
	if !reads {
		out.skipped = append(out.skipped, kind)
		return nil
	}
	// The namespace the object is created in (none for a cluster-scoped
	// kind), set before anything keys on it.
	name, ns, nsMsg := h.name, "", ""
	if rk.namespaced {
		ns, nsMsg = namespaceOf(h.namespace, out.namespace)
	}
	desc := kind
	if name != "" {
		desc = kind + " " + strings.TrimPrefix(ns+"/"+name, "/")
	}
	if msg := checkVersion(rk, apiVersion, kind); msg != "" {
		return lerr(desc, "apiVersion", msg)
	}
	if name == "" {
		return lerr(kind, "metadata.name", "Required value")
	}
	if nsMsg != "" {
		return lerr(desc, "metadata.namespace", nsMsg)
	}
	// keep sets what the object was read with but does not hold, and is
	// false for a Helm test hook, left out with a warning.
	keep := func(obj runtime.Object) bool {
		setNamespace(obj, ns)
		if typeless {
			obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
		}
		if hooks, ok := helmTestHook(obj); ok {
			out.hooks++
			out.warnings = append(out.warnings, lerr(desc, "metadata.annotations["+helmHookAnnotation+"]", fmt.Sprintf(
				"%q: left out: a Helm test hook is created by helm test, not by helm install", hooks)).Error())
			return false
		}
		return true
	}
	// ok: js is valid JSON and its head was read by the byte walk.
	var span shareSpan
	shareable := false
	if member := sharedMember(kind, apiVersion); ok && member != "" && out.in != nil {
		var buf *[]byte
		span, buf, shareable = shareKey(js, kind, member)
		defer span.release(buf)
		if shareable {
			if obj, hit := out.in.decodeShared(js, kind, apiVersion, span); hit {
				if !keep(obj.(runtime.Object)) {
					return nil
				}
				if n, ok := obj.(*v1.Node); ok {
					warnRoomless(n, out, lerr)
				}
				out.objs = append(out.objs, obj.(runtime.Object))
				return nil
			}
		}
	}
	obj, strictErr, err := decodeStrict(js, kind, apiVersion)
	if err == nil && !keep(obj) {
		// helm install does not send it: nothing in it is refused.
		return nil
	}
	if err != nil || hasBadQuantity(obj) {
		var u map[string]interface{}
		if json.Unmarshal(js, &u) == nil {
			if fieldPath, msg := checkQuantities(u, ""); msg != "" {
				return lerr(desc, fieldPath, msg)
			}
		}
	}
	if err != nil {
		return lerr(desc, "", err.Error())
	}
	if strictErr != nil {
		return lerr(desc, "", strictErr.Error())
	}
	if errs := validate(obj); len(errs) > 0 {
		return lerr(desc, errs[0].Field, errs[0].ErrorBody())
	}
	switch o := obj.(type) {
	case *v1.Pod:
		out.in.pod(o)
	case *v1.Node:
		warnRoomless(o, out, lerr)
		out.in.node(o)
	}
	if shareable {
		out.in.remember(span.key, obj)
	}
	out.objs = append(out.objs, obj)
	return nil
}

// warnRoomless warns of a node without capacity or allocatable: the API
// server takes it (the kubelet reports the status), but in the simulation
// it has room for nothing, which the input almost certainly did not mean.
func warnRoomless(n *v1.Node, out *decoded, lerr func(obj, fieldPath, msg string) error) {
	if n.Status.Capacity == nil && n.Status.Allocatable == nil {
		out.warnings = append(out.warnings, lerr("Node "+n.Name, "status.capacity",
			"not set (nor status.allocatable): the node has no room, no pod fits on it").Error())
	}
}

// isList: a List (kubectl get -o yaml's v1 List), or a typed List of any
// group and version (DeploymentList, the API server's answer to a list
// request); items is the document's items member, nil if it has none. A
// typed List always has one (the API server writes it even empty), so a
// kind ending in List without items, outside v1, is an object of its own.
func isList(kind, apiVersion string, items []byte) bool {
	if !strings.HasSuffix(kind, "List") {
		return false
	}
	return apiVersion == "v1" || (kind != "List" && items != nil)
}

// decodeList decodes a List's items (a JSON array) in parallel; the first
// error in item order is returned. The items of a typed List that name no
// kind or apiVersion are of the List's (kind without List).
func decodeList(path string, doc int, kind, apiVersion string, itemsJSON []byte, out *decoded) error {
	var raw [][]byte
	if len(itemsJSON) > 0 && string(itemsJSON) != "null" {
		// itemsJSON is valid JSON (part of a valid document): an array
		// splits without decoding; anything else gets encoding/json's error.
		var ok bool
		if raw, ok = splitArray(itemsJSON); !ok {
			var msgs []json.RawMessage
			err := json.Unmarshal(itemsJSON, &msgs)
			if err == nil {
				err = fmt.Errorf("items: not an array")
			}
			return &LoadError{File: path, Document: doc, Object: kind, Field: "items", Msg: err.Error()}
		}
	}
	items := make([]decoded, len(raw))
	itemKind, itemAPIVersion := "", ""
	if kind != "List" {
		itemKind, itemAPIVersion = strings.TrimSuffix(kind, "List"), apiVersion
	}
	for i := range items {
		items[i].in, items[i].namespace = out.in, out.namespace
		items[i].itemKind, items[i].itemAPIVersion = itemKind, itemAPIVersion
	}
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(items), func(i int) {
		items[i].err = decodeDocument(path, doc, i+1, raw[i], true, &items[i])
	})
	for i := range items {
		if items[i].err != nil {
			return items[i].err
		}
		for range items[i].objs {
			out.items = append(out.items, i+1)
		}
		out.objs = append(out.objs, items[i].objs...)
		out.skipped = append(out.skipped, items[i].skipped...)
		out.hooks += items[i].hooks
		out.warnings = append(out.warnings, items[i].warnings...)
	}
	return nil
}

// decodeStrict decodes one object of a known kind as the API server's
// strict field validation would: unknown and duplicate fields are
// strictErr, the object decoded all the same; a malformed value is err. It
// is the universal deserializer's strict decode without its own pass to
// find the kind, which the caller already has.
func decodeStrict(js []byte, kind, apiVersion string) (obj runtime.Object, strictErr, err error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if obj, err = scheme.Scheme.New(gvk); err != nil {
		return nil, nil, err
	}
	strictErrs, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return nil, nil, err
	}
	if len(strictErrs) > 0 {
		strictErr = runtime.NewStrictDecodingError(strictErrs)
	}
	return obj, strictErr, nil
}
