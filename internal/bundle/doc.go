// Package bundle turns what users already have (manifests, a Helm chart, a kustomize folder) into one
// PlacementManifestWork: the pure core of `kubectl pmw wrap` and `kubectl pmw render`. It reads, renders and
// encodes; it never talks to a Kubernetes cluster (RenderHelm may fetch a remote chart).
//
//   - ReadManifests reads a YAML or JSON stream (Lists flattened).
//   - RenderHelm renders a chart with the Helm SDK; RenderKustomize builds a kustomization with the kustomize
//     API. Both return objects, unchanged but for Helm's rendering.
//   - Wrap builds the PlacementManifestWork from objects and Options; Encode writes it.
//
// # What Wrap does to the manifests
//
//   - Namespaced objects without a namespace get Options.Namespace, which is also the PlacementManifestWork's
//     namespace (for a chart, the release namespace). Cluster-scoped objects lose a namespace they carry. An
//     object is cluster-scoped when its kind is one of Kubernetes' (Namespace, ClusterRole, StorageClass,
//     CustomResourceDefinition, webhook configurations, ...), when a CustomResourceDefinition in the input
//     defines it with scope Cluster, or when Options.ClusterScoped names it (--cluster-scoped
//     ClusterIssuer.cert-manager.io); any other kind is taken as namespaced.
//   - metadata.creationTimestamp, resourceVersion, uid, generation, managedFields and an empty status are
//     dropped: they are noise in a template (kubectl --dry-run prints creationTimestamp: null).
//   - The manifests are sorted as Helm installs them (Namespaces, ServiceAccounts, Secrets, ConfigMaps, CRDs,
//     RBAC, Services, workloads, ...; other kinds after, by kind), then by group, namespace, name and version:
//     the order of the input never matters, and the work agent creates Namespaces and CRDs first.
//   - Two objects of the same group, kind, namespace and name are an error, as are objects without a name
//     (generateName cannot work in a ManifestWork).
//   - Helm hooks (the helm.sh/hook annotation) are judged by their events, each with a warning:
//     tests (test, test-success) are dropped, as the fleet has no `helm test` step; hooks of
//     pre/post-install or pre/post-upgrade are kept as ordinary manifests, because charts rely on them (a
//     migration Job, a generated certificate) and each cluster needs them; each cluster applies them with
//     the other manifests, in no order, when it first gets the work and when they change, and keeps them
//     (hook-delete-policy and hook-weight do not apply; a kept Job cannot be updated in place, so it must be
//     renamed when its spec changes); hooks only of pre/post-delete or pre/post-rollback are dropped, as a
//     PlacementManifestWork has no such step to run them at.
//   - A Secret gets a warning: it is stored in plain text in the PlacementManifestWork and in every cluster's
//     ManifestWork on the hub.
//   - CustomResourceDefinitions are orphaned (manifestWorkTemplate.deleteOption SelectivelyOrphan, one
//     orphaning rule per CRD): deleting the PlacementManifestWork, or taking the CRD out of it, leaves the CRD
//     on the clusters, as Helm leaves a chart's crds/. Removing a CRD would remove every custom resource of its
//     kind on the cluster, whoever created them; delete it by hand when no cluster needs it.
//   - The encoded manifests must fit Options.MaxManifestBytes (OCM's 500 KiB by default), or Wrap fails
//     saying to split them into several PlacementManifestWorks.
//   - Splits and SplitAllWorkloads add distributionStrategy entries of type Split (Balance, no fieldPath:
//     the manager divides the kind's replica field). Rollout options become spec.rolloutStrategy, checked as
//     the CRD checks them. Without Options.Placement there is no placementRef and the manager creates a
//     Placement named like the PlacementManifestWork.
//
// # What RenderHelm does with a chart
//
// It renders as `helm install` would, client-side only (the Helm SDK's install action with DryRun, ClientOnly
// and Replace): subcharts, values (files, --set and its variants), the values schema, the chart's kubeVersion
// and .Capabilities (Kubernetes DefaultKubeVersion unless HelmOptions.KubeVersion, plus HelmOptions.APIVersions)
// all work; lookup returns nothing, as in `helm template`. The release is named like the chart unless
// HelmOptions.ReleaseName, in namespace "default" unless HelmOptions.Namespace.
//
//   - templates/: every rendered object, hooks and tests included, for Wrap to judge as above.
//   - crds/: left out unless HelmOptions.IncludeCRDs, with a warning naming the files. Helm installs crds/ once
//     and never upgrades or deletes them, because a CRD is cluster-wide and shared by every release; in a
//     PlacementManifestWork it would be updated on every render, so delivering it is a choice the user makes
//     (--include-crds), knowing the CRD then stays on the clusters when the PlacementManifestWork goes (see
//     the orphaning above). OCM delivers CRDs fine, ahead of RBAC and workloads in the manifests.
//   - NOTES.txt: dropped (it is for a person at a terminal).
//   - An object that renders differently twice in a row (randAlphaNum, genCA, now in a template) gets a
//     warning: every render would change every cluster's ManifestWork; the user should pin the value.
//   - A chart with dependencies not in charts/ is an error asking for `helm dependency build`; a library chart
//     is an error.
//
// The chart is a directory, a packaged .tgz, an oci:// reference, or repo/chart of the user's Helm
// repositories (or a name with HelmOptions.RepoURL), fetched as helm does with the user's Helm configuration
// (HELM_REGISTRY_CONFIG, HELM_REPOSITORY_CONFIG, HELM_REPOSITORY_CACHE); a path that exists wins. Nothing is
// written to stdout.
//
// # What RenderKustomize does with a folder
//
// It builds the kustomization as `kubectl kustomize` does, with kustomize's defaults: files only from inside
// the folder, built-in generators and transformers only (no plugins, no helmCharts, no exec or container
// functions). Objects without a namespace then get Options.Namespace from Wrap.
//
// # Determinism
//
// The same input gives the same bytes: Wrap sorts the manifests, Encode sorts every object's keys and writes no
// status and no creationTimestamp, Helm and kustomize render deterministically (but for the random functions
// RenderHelm warns about). So GitOps diffs stay quiet.
//
// # Errors
//
// Every error is one line that names the input (the source and document of a stream, the chart, the folder,
// the --split hint) and says what to do. The flags errors name (--name, --namespace, --placement, --split,
// --cluster-scoped, --rollout, --max-concurrency, --min-success-time, --progress-deadline, --max-failures, --max-manifest-bytes,
// --include-crds, --set, --values, --version, --repo) are kubectl pmw's.
package bundle
