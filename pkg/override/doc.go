// Package override applies a PlacementManifestWork's overrides (spec.overrides, workv1alpha1.ClusterOverride)
// to the manifests one cluster gets, after the split: the per-cluster variation of one application (a
// regional image mirror, the cluster's name in an environment variable, a storage class per cloud). It also
// finds the companions of a split workload (its HorizontalPodAutoscaler and PodDisruptionBudget) and
// apportions their counts by the cluster's share. Pure: no client, no context, no I/O.
//
// # Use
//
// Compile the overrides once per PlacementManifestWork generation (the caller caches the *Set); what it
// refuses is a Problems error that names each override and field at fault: only the user can fix it, so the
// PlacementManifestWork is Stalled. CheckTemplate refuses, per template, what else is known before any cluster
// is looked at: a patch that touches the split field of a Split manifest, an override whose manifests match no
// manifest, an image short form that would rewrite no image (no selected manifest has a container in a pod
// spec it reads, or a manifest its manifests entries name has containers only elsewhere); CheckDelivered
// leaves the image checks out for a revision delivered already. Then, per decided cluster, Resolve
// selects the overrides that apply to it (Selects) and evaluates their expressions once; Resolved.Key says
// which clusters get the same result from the same manifests, so the planner encodes each distinct result once
// (clusters that no override selects have the key ""); Resolved.Apply applies the overrides to one manifest,
// already split for the cluster. Render does all of it for one cluster's manifests, for a preview. Status
// counts, per override, the clusters it applied to and those where it failed.
//
// Overrides apply in list order, a later one winning: each one that selects the cluster and the manifest
// rewrites the images first (image: the containers and init containers of a Pod's spec, and of any other
// kind's spec.template.spec and spec.jobTemplate.spec.template.spec), then applies its patches (RFC 6902 add,
// replace and remove, with github.com/evanphx/json-patch/v5; the parent of an added value must exist, and the
// target of replace and remove must exist).
//
// # What is checked when
//
// The CRD refuses what its rules can: other operations, malformed JSON Pointers, paths into /apiVersion,
// /kind, /metadata, /metadata/name and /metadata/namespace, malformed literal registries, repositories and
// tags, a remove with an expression, an override that changes nothing, and too many overrides or patches.
// Compile checks all of that again (the manager may read objects stored before a rule existed) and what the
// API server cannot check: a value beside an expression, or neither, on add and replace (value is of any
// type, which CRD rules cannot see), label selectors, CEL expressions (syntax, types, result type, cost).
// CheckTemplate checks the overrides against the template. Per cluster (Failure values, never panics): an
// expression that fails or returns what is not JSON (or not a valid registry, repository or tag), a path
// missing in that manifest, an image that cannot be parsed, and a result that changes a manifest's
// apiVersion, kind, name, namespace or split field. A failure on a cluster fails that cluster only: the caller
// keeps its delivered ManifestWork and reports the override and the cluster.
//
// # CEL
//
// A patch's expression and an image part's expression see one variable, cluster:
//
//	cluster.name    string               the ManagedCluster's name
//	cluster.labels  map(string, string)  its labels
//	cluster.claims  map(string, string)  its ClusterClaims (status.clusterClaims), by claim name
//	cluster.shares  map(string, int)     its shares of the split manifests, keyed as the planner's SplitKey:
//	                                     "<Kind>.<group> <namespace>/<name> <field path>", for example
//	                                     "Deployment.apps default/web .spec.replicas"
//
// A key that is absent is an error for that cluster: guard with 'region' in cluster.labels, or use optional
// types, cluster.labels.?region.orValue('us'). A patch's expression returns a JSON value: a string, an int, a
// uint (at most 2^63-1), a double (finite), a bool, null, a list or a map with string keys; an image part's
// expression returns a string. The environment is the ResourceInterpreters' (package interpreter): CEL's
// standard library, optional types, and cel-go's strings and lists extensions at pinned versions.
//
// Limits are the ResourceInterpreters' too: an expression whose worst-case cost as estimated by the CEL
// checker is above celeval.CostBudget is refused at Compile (lists and maps are assumed to hold at most
// celeval.EstimatedMaxItems entries, strings at most celeval.EstimatedMaxStringSize characters); one
// evaluation stops after celeval.MaxIterations loop steps whatever the data, which fails that cluster.
// Evaluation is deterministic (no clock, no context): equal facts give equal results.
package override
