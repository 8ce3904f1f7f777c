// Package loading reads Kubernetes manifests (YAML or JSON files,
// folders, kubectl's Lists, standard input) into a cluster.Cluster.
//
// It owns decoding (strict, as the API server's field validation, with
// errors in one format that name the file, the document, the object and
// the field: LoadError, SourceError), the API server's validation of the
// fields the simulator reads (workloads' counts, selectors and pod
// templates, a pod's containers), the refusal of input with nothing to
// simulate, the warnings about input taken as it is (a Node without
// capacity; a pod bound to a missing node, left out), the defaults
// the API server and the admission plugins apply that scheduling reads
// (pods, nodes, ResourceClaims and their templates: one path for each,
// which the world and the timeline also use for the objects they create),
// the quantity bounds the API server enforces, the sharing of equal specs
// and resource lists between loaded objects, and the Scenario document's
// decoding.
//
// What is read is what kubectl apply -f of the files in order would leave
// in a kube-apiserver v1.37.2:
//
//   - The kinds read are those of kinds.go's readKinds, by group: a kind
//     of the same name in another group (a custom resource), and every
//     other kind, is counted as skipped, whatever its version. A kind read
//     in a version the API server does not serve (extensions/v1beta1
//     Deployment, policy/v1beta1 PodDisruptionBudget, batch/v1beta1
//     CronJob, autoscaling/v2beta2 HorizontalPodAutoscaler...) is refused
//     as kubectl refuses it: "apiVersion: no matches for kind "Deployment"
//     in version "extensions/v1beta1"". One it serves only with
//     --runtime-config, in a version the simulator does not decode
//     (resource.k8s.io/v1beta1 ResourceClaim...), is refused naming the
//     version to write. autoscaling/v1 HorizontalPodAutoscalers are read
//     as v2.
//   - Lists: kubectl's v1 List, and every typed List (DeploymentList, of
//     any group and version) are read item by item, in order; an item
//     without kind or apiVersion (the API server's typed Lists) has its
//     List's.
//   - Namespaces: every namespaced kind read is created in its
//     metadata.namespace, else that of -n (Options.Namespace), else
//     default; the namespace is set on the object as it is read, before
//     anything keys on it. With -n, an object naming another namespace is
//     refused with kubectl apply -n's message. A cluster-scoped object's
//     namespace is cleared, as the API server clears it. A Scenario's
//     steps name their objects the same way.
//   - Duplicates: a later object of the same kind, namespace and name as
//     one read before (another file, another document, another List item)
//     replaces it everywhere (cluster.Applier; in the first one's place,
//     as the object kubectl apply updates keeps its creation), with a
//     warning naming both places; a replaced workload creates no pods.
//   - Helm test hooks (annotated helm.sh/hook: test, test-success or
//     test-failure, and no other hook) are left out with a warning:
//     helm install does not create them, helm test does. Other hooks
//     (pre-install Jobs...) are kept: helm install runs them.
//
// It imports the cluster package only (and runs the workloads'
// controllers once, at the end of a load); the World (package simulator),
// the timeline, the questions and cmd/ import it.
package loading
