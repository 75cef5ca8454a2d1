package interpreters_test

import "testing"

// The samples below follow each project's documented status: field names, condition types and phase values as
// their API types and docs define them.

const rollout = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  strategy: {canary: {steps: [{setWeight: 20}, {pause: {}}]}}
`

func TestRollout(t *testing.T) {
	done := map[string]any{
		"generation": 4, "observedGeneration": "4", "phase": "Healthy", "replicas": 3, "updatedReplicas": 3,
		"readyReplicas": 3, "availableReplicas": 3, "progressingReason": "NewReplicaSetAvailable",
	}
	runHealth(t, "rollouts.argoproj.io.yaml", map[string]healthCase{
		"healthy":                   {manifest: rollout, feedback: done, want: healthy},
		"no status yet":             {manifest: rollout, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed":   {manifest: rollout, feedback: with(done, map[string]any{"generation": 5}), want: progressing("RolloutInProgress")},
		"canary step paused":        {manifest: rollout, feedback: with(done, map[string]any{"phase": "Paused", "updatedReplicas": 1, "replicas": 4, "message": "CanaryPauseStep"}), want: progressing("RolloutPaused")},
		"paused by kubectl":         {manifest: rollout, feedback: with(done, map[string]any{"paused": true}), want: progressing("RolloutPaused")},
		"canary at 1 of 3":          {manifest: rollout, feedback: with(done, map[string]any{"phase": "Progressing", "updatedReplicas": 1, "replicas": 4}), want: progressing("RolloutInProgress")},
		"old replicas left":         {manifest: rollout, feedback: with(done, map[string]any{"phase": "Progressing", "replicas": 6}), want: progressing("RolloutInProgress")},
		"new pods not available":    {manifest: rollout, feedback: with(done, map[string]any{"phase": "Progressing", "availableReplicas": 2}), want: progressing("RolloutInProgress")},
		"zero counts omitted":       {manifest: rollout, feedback: with(done, nil, "updatedReplicas", "readyReplicas", "availableReplicas"), want: progressing("RolloutInProgress")},
		"aborted":                   {manifest: rollout, feedback: with(done, map[string]any{"aborted": true, "phase": "Degraded", "message": "RolloutAborted: metric error-rate failed"}), want: degraded("RolloutAborted")},
		"degraded":                  {manifest: rollout, feedback: with(done, map[string]any{"phase": "Degraded", "message": "ReplicaSet web-6d4f has timed out progressing"}), want: degraded("RolloutDegraded")},
		"progress deadline":         {manifest: rollout, feedback: with(done, map[string]any{"progressingReason": "ProgressDeadlineExceeded"}), want: degraded("ProgressDeadlineExceeded")},
		"phase not healthy yet":     {manifest: rollout, feedback: with(done, map[string]any{"phase": "Progressing"}), want: progressing("RolloutInProgress")},
		"share of 3: 3 ready":       {manifest: rollout, share: share(3), feedback: done, want: healthy},
		"share of 3: 2 ready":       {manifest: rollout, share: share(3), feedback: with(done, map[string]any{"readyReplicas": 2, "availableReplicas": 2}), want: progressing("RolloutInProgress")},
		"share of 3: 2 updated":     {manifest: rollout, share: share(3), feedback: with(done, map[string]any{"updatedReplicas": 2}), want: progressing("RolloutInProgress")},
		"replicas unset defaults 1": {manifest: "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: one}}", feedback: with(done, map[string]any{"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}), want: healthy},
	})
}

const cloneSet = `
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: api, namespace: shop}
spec:
  replicas: 3
  updateStrategy: {type: InPlaceIfPossible}
`

func TestCloneSet(t *testing.T) {
	done := map[string]any{
		"generation": 2, "observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
		"updatedReplicas": 3, "updatedReadyReplicas": 3, "expectedUpdatedReplicas": 3, "updateRevision": "api-7c9d",
	}
	runHealth(t, "clonesets.apps.kruise.io.yaml", map[string]healthCase{
		"healthy":                   {manifest: cloneSet, feedback: done, want: healthy},
		"no status yet":             {manifest: cloneSet, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed":   {manifest: cloneSet, feedback: with(done, map[string]any{"generation": 3}), want: progressing("RolloutInProgress")},
		"in-place update under way": {manifest: cloneSet, feedback: with(done, map[string]any{"updatedReplicas": 1, "updatedReadyReplicas": 1}), want: progressing("RolloutInProgress")},
		"partition holds 2":         {manifest: cloneSet, feedback: with(done, map[string]any{"updatedReplicas": 1, "updatedReadyReplicas": 1, "expectedUpdatedReplicas": 1}), want: progressing("UpdatePartitioned")},
		"update paused":             {manifest: cloneSet, feedback: with(done, map[string]any{"updatedReplicas": 0, "paused": true}, "updatedReadyReplicas"), want: progressing("UpdatePaused")},
		"updated but not ready":     {manifest: cloneSet, feedback: with(done, map[string]any{"updatedReadyReplicas": 2, "readyReplicas": 2}), want: progressing("RolloutInProgress")},
		"surge pod left":            {manifest: cloneSet, feedback: with(done, map[string]any{"replicas": 4}), want: progressing("RolloutInProgress")},
		"scale failed":              {manifest: cloneSet, feedback: with(done, map[string]any{"failedScale": "True", "failedScaleMessage": "pods \"api-x\" is forbidden: exceeded quota"}), want: degraded("ReplicaFailure")},
		"update failed":             {manifest: cloneSet, feedback: with(done, map[string]any{"failedUpdate": "True"}), want: degraded("UpdateFailed")},
		"share of 3: 3 ready":       {manifest: cloneSet, share: share(3), feedback: done, want: healthy},
		"share of 3: 2 ready":       {manifest: cloneSet, share: share(3), feedback: with(done, map[string]any{"readyReplicas": 2, "availableReplicas": 2, "updatedReadyReplicas": 2}), want: progressing("RolloutInProgress")},
	})
}

const knativeService = `
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: hello, namespace: web}
spec:
  template:
    spec:
      containers: [{image: ghcr.io/knative/helloworld-go:latest}]
`

func TestKnativeService(t *testing.T) {
	done := map[string]any{
		"generation": 2, "observedGeneration": 2, "ready": "True", "latestCreatedRevision": "hello-00002",
		"latestReadyRevision": "hello-00002", "url": "https://hello.web.example.com",
	}
	runHealth(t, "services.serving.knative.dev.yaml", map[string]healthCase{
		"healthy":                              {manifest: knativeService, feedback: done, want: healthy},
		"no status yet":                        {manifest: knativeService, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed":              {manifest: knativeService, feedback: with(done, map[string]any{"generation": 3}), want: progressing("RolloutInProgress")},
		"new revision not ready":               {manifest: knativeService, feedback: with(done, map[string]any{"ready": "Unknown", "latestCreatedRevision": "hello-00003", "readyReason": "RevisionMissing"}), want: progressing("RevisionNotReady")},
		"old revision still ready, Ready True": {manifest: knativeService, feedback: with(done, map[string]any{"latestCreatedRevision": "hello-00003"}), want: progressing("RevisionNotReady")},
		"first revision pending":               {manifest: knativeService, feedback: with(done, map[string]any{"ready": "Unknown"}, "latestReadyRevision"), want: progressing("RevisionNotReady")},
		"revision failed":                      {manifest: knativeService, feedback: with(done, map[string]any{"ready": "False", "readyReason": "RevisionFailed", "readyMessage": "Revision \"hello-00003\" failed with message: Back-off pulling image"}), want: degraded("ServiceNotReady")},
		"routes not ready":                     {manifest: knativeService, feedback: with(done, map[string]any{"ready": "Unknown"}), want: progressing("ServiceNotReady")},
	})
}

const scaledObject = `
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: worker, namespace: jobs}
spec:
  scaleTargetRef: {name: worker}
  minReplicaCount: 1
  maxReplicaCount: 20
  triggers: [{type: rabbitmq, metadata: {queueName: tasks, mode: QueueLength, value: "20"}}]
`

func TestScaledObject(t *testing.T) {
	done := map[string]any{"ready": "True", "active": "True", "fallback": "False", "paused": "False", "hpaName": "keda-hpa-worker", "originalReplicaCount": 1}
	runHealth(t, "scaledobjects.keda.sh.yaml", map[string]healthCase{
		"healthy and active": {manifest: scaledObject, feedback: done, want: healthy},
		"healthy and idle":   {manifest: scaledObject, feedback: with(done, map[string]any{"active": "False"}), want: healthy},
		"no status yet":      {manifest: scaledObject, feedback: nil, want: progressing("WaitingForFeedback")},
		"conditions unknown": {manifest: scaledObject, feedback: with(done, map[string]any{"ready": "Unknown", "active": "Unknown"}), want: progressing("ScaledObjectNotReady")},
		"check failed":       {manifest: scaledObject, feedback: with(done, map[string]any{"ready": "False", "readyReason": "ScaledObjectCheckFailed", "readyMessage": "ScaledObject doesn't have correct Idle/Min/Max Replica Counts specification"}), want: degraded("ScaledObjectNotReady")},
		"fallback active":    {manifest: scaledObject, feedback: with(done, map[string]any{"fallback": "True"}), want: degraded("FallbackActive")},
		"autoscaling paused": {manifest: scaledObject, feedback: with(done, map[string]any{"paused": "True"}), want: verdict{State: "Healthy", Reason: "AutoscalingPaused"}},
	})
}

const cnpgCluster = `
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata: {name: orders-db, namespace: shop}
spec:
  instances: 3
  storage: {size: 10Gi}
`

func TestCloudNativePGCluster(t *testing.T) {
	done := map[string]any{
		"instances": 3, "readyInstances": 3, "phase": "Cluster in healthy state", "ready": "True",
		"currentPrimary": "orders-db-1", "targetPrimary": "orders-db-1",
	}
	runHealth(t, "clusters.postgresql.cnpg.io.yaml", map[string]healthCase{
		"healthy":              {manifest: cnpgCluster, feedback: done, want: healthy},
		"no status yet":        {manifest: cnpgCluster, feedback: nil, want: progressing("WaitingForFeedback")},
		"setting up primary":   {manifest: cnpgCluster, feedback: map[string]any{"phase": "Setting up primary", "instances": 1}, want: progressing("ClusterNotHealthy")},
		"creating a replica":   {manifest: cnpgCluster, feedback: with(done, map[string]any{"phase": "Creating a new replica", "readyInstances": 2}), want: progressing("ClusterNotHealthy")},
		"upgrading":            {manifest: cnpgCluster, feedback: with(done, map[string]any{"phase": "Upgrading cluster", "phaseReason": "Upgrading orders-db-2"}), want: progressing("ClusterNotHealthy")},
		"waiting for user":     {manifest: cnpgCluster, feedback: with(done, map[string]any{"phase": "Waiting for user action", "phaseReason": "User must issue a supervised switchover"}), want: progressing("ClusterNotHealthy")},
		"instance not ready":   {manifest: cnpgCluster, feedback: with(done, map[string]any{"readyInstances": 2}), want: progressing("InstancesNotReady")},
		"switchover under way": {manifest: cnpgCluster, feedback: with(done, map[string]any{"targetPrimary": "orders-db-2"}), want: progressing("SwitchoverInProgress")},
		"ready false":          {manifest: cnpgCluster, feedback: with(done, map[string]any{"ready": "False"}), want: progressing("ClusterNotReady")},
		"unrecoverable":        {manifest: cnpgCluster, feedback: with(done, map[string]any{"phase": "Cluster is in an unrecoverable state, needs manual intervention"}), want: degraded("ClusterUnrecoverable")},
		"cannot proceed":       {manifest: cnpgCluster, feedback: with(done, map[string]any{"phase": "Cluster cannot proceed to reconciliation due to an unknown plugin being required"}), want: degraded("ClusterUnrecoverable")},
	})
}

const helmRelease = `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo, namespace: apps}
spec:
  interval: 10m
  chart: {spec: {chart: podinfo, version: "6.x", sourceRef: {kind: HelmRepository, name: podinfo}}}
`

func TestHelmRelease(t *testing.T) {
	done := map[string]any{
		"generation": 3, "observedGeneration": 3, "ready": "True", "readyReason": "UpgradeSucceeded",
		"readyMessage": "Helm upgrade succeeded for release apps/podinfo.v3 with chart podinfo@6.7.1", "lastAttemptedRevision": "6.7.1",
	}
	runHealth(t, "helmreleases.helm.toolkit.fluxcd.io.yaml", map[string]healthCase{
		"healthy":                 {manifest: helmRelease, feedback: done, want: healthy},
		"no status yet":           {manifest: helmRelease, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed": {manifest: helmRelease, feedback: with(done, map[string]any{"generation": 4}), want: progressing("RolloutInProgress")},
		"upgrading":               {manifest: helmRelease, feedback: with(done, map[string]any{"ready": "Unknown", "readyReason": "Progressing", "reconciling": "True"}), want: progressing("Reconciling")},
		"upgrade failed":          {manifest: helmRelease, feedback: with(done, map[string]any{"ready": "False", "readyReason": "UpgradeFailed", "readyMessage": "Helm upgrade failed: timed out waiting for the condition"}), want: degraded("ReconciliationFailed")},
		"stalled":                 {manifest: helmRelease, feedback: with(done, map[string]any{"ready": "False", "stalled": "True", "stalledReason": "RetriesExceeded"}), want: degraded("Stalled")},
		"suspended":               {manifest: helmRelease, feedback: with(done, map[string]any{"suspend": true, "generation": 4}), want: progressing("Suspended")},
	})
}

const fluxKustomization = `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system}
spec:
  interval: 10m
  path: ./infrastructure
  prune: true
  sourceRef: {kind: GitRepository, name: platform}
`

func TestFluxKustomization(t *testing.T) {
	done := map[string]any{
		"generation": 2, "observedGeneration": 2, "ready": "True", "readyReason": "ReconciliationSucceeded",
		"lastAppliedRevision": "main@sha1:5f3b2e1", "lastAttemptedRevision": "main@sha1:5f3b2e1",
	}
	runHealth(t, "kustomizations.kustomize.toolkit.fluxcd.io.yaml", map[string]healthCase{
		"healthy":                  {manifest: fluxKustomization, feedback: done, want: healthy},
		"no status yet":            {manifest: fluxKustomization, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed":  {manifest: fluxKustomization, feedback: with(done, map[string]any{"generation": 3}), want: progressing("RolloutInProgress")},
		"reconciling":              {manifest: fluxKustomization, feedback: with(done, map[string]any{"ready": "Unknown", "reconciling": "True", "readyReason": "Progressing"}), want: progressing("Reconciling")},
		"new revision not applied": {manifest: fluxKustomization, feedback: with(done, map[string]any{"lastAttemptedRevision": "main@sha1:9a8c7d6"}), want: progressing("Reconciling")},
		"health check failed":      {manifest: fluxKustomization, feedback: with(done, map[string]any{"ready": "False", "readyReason": "HealthCheckFailed", "readyMessage": "timeout waiting for: [Deployment/infra/ingress status: 'InProgress']"}), want: degraded("ReconciliationFailed")},
		"build failed, stalled":    {manifest: fluxKustomization, feedback: with(done, map[string]any{"ready": "False", "stalled": "True", "stalledReason": "BuildFailed"}), want: degraded("Stalled")},
		"suspended":                {manifest: fluxKustomization, feedback: with(done, map[string]any{"suspend": true}), want: progressing("Suspended")},
	})
}

const (
	vmAlways = `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: db-vm, namespace: vms}
spec:
  runStrategy: Always
  template: {spec: {domain: {devices: {}}}}
`
	vmHalted = `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: db-vm, namespace: vms}
spec:
  runStrategy: Halted
`
	vmRunningFalse = `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: db-vm, namespace: vms}
spec:
  running: false
`
	vmManual = `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: db-vm, namespace: vms}
spec:
  runStrategy: Manual
`
)

func TestVirtualMachine(t *testing.T) {
	running := map[string]any{"generation": 2, "observedGeneration": 2, "printableStatus": "Running", "ready": true, "created": true}
	stopped := map[string]any{"generation": 2, "observedGeneration": 2, "printableStatus": "Stopped", "ready": false, "created": false}
	runHealth(t, "virtualmachines.kubevirt.io.yaml", map[string]healthCase{
		"running and ready":       {manifest: vmAlways, feedback: running, want: healthy},
		"no status yet":           {manifest: vmAlways, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed": {manifest: vmAlways, feedback: with(running, map[string]any{"generation": 3}), want: progressing("RolloutInProgress")},
		"starting":                {manifest: vmAlways, feedback: with(running, map[string]any{"printableStatus": "Starting", "ready": false}), want: progressing("VirtualMachineNotReady")},
		"running, not ready":      {manifest: vmAlways, feedback: with(running, map[string]any{"ready": false}), want: progressing("VirtualMachineNotReady")},
		"paused":                  {manifest: vmAlways, feedback: with(running, map[string]any{"printableStatus": "Paused"}), want: progressing("VirtualMachinePaused")},
		"stopped, asked to run":   {manifest: vmAlways, feedback: stopped, want: progressing("VirtualMachineNotReady")},
		"unschedulable":           {manifest: vmAlways, feedback: with(running, map[string]any{"printableStatus": "ErrorUnschedulable", "ready": false}), want: degraded("VirtualMachineFailed")},
		"crash loop":              {manifest: vmAlways, feedback: with(running, map[string]any{"printableStatus": "CrashLoopBackOff", "ready": false, "failureMessage": "virt-launcher failed"}), want: degraded("VirtualMachineFailed")},
		"halted and stopped":      {manifest: vmHalted, feedback: stopped, want: healthy},
		"halted, still stopping":  {manifest: vmHalted, feedback: with(running, map[string]any{"printableStatus": "Stopping"}), want: progressing("Stopping")},
		"running false, stopped":  {manifest: vmRunningFalse, feedback: stopped, want: healthy},
		"manual, stopped":         {manifest: vmManual, feedback: stopped, want: healthy},
		"manual, running":         {manifest: vmManual, feedback: running, want: healthy},
	})
}

const rayCluster = `
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train, namespace: ml}
spec:
  headGroupSpec: {rayStartParams: {}, template: {spec: {containers: [{name: ray-head, image: rayproject/ray:2.41.0}]}}}
  workerGroupSpecs:
  - {groupName: gpu, replicas: 2, minReplicas: 0, maxReplicas: 4, rayStartParams: {}, template: {spec: {containers: [{name: ray-worker, image: rayproject/ray:2.41.0}]}}}
`

func TestRayCluster(t *testing.T) {
	done := map[string]any{
		"generation": 1, "observedGeneration": 1, "state": "ready", "headPodReady": "True", "readyWorkerReplicas": 2,
		"availableWorkerReplicas": 2, "desiredWorkerReplicas": 2,
	}
	suspended := `
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: train, namespace: ml}
spec: {suspend: true, headGroupSpec: {rayStartParams: {}, template: {spec: {containers: [{name: ray-head}]}}}}
`
	runHealth(t, "rayclusters.ray.io.yaml", map[string]healthCase{
		"healthy":                 {manifest: rayCluster, feedback: done, want: healthy},
		"no status yet":           {manifest: rayCluster, feedback: map[string]any{"generation": 1}, want: progressing("WaitingForFeedback")},
		"generation not observed": {manifest: rayCluster, feedback: with(done, map[string]any{"generation": 2}), want: progressing("RolloutInProgress")},
		"head pod not ready":      {manifest: rayCluster, feedback: with(done, map[string]any{"headPodReady": "False"}, "state"), want: progressing("HeadPodNotReady")},
		"1 of 2 workers ready":    {manifest: rayCluster, feedback: with(done, map[string]any{"readyWorkerReplicas": 1}), want: progressing("WorkersNotReady")},
		"no worker ready":         {manifest: rayCluster, feedback: with(done, nil, "readyWorkerReplicas"), want: progressing("WorkersNotReady")},
		"replica failure":         {manifest: rayCluster, feedback: with(done, map[string]any{"replicaFailure": "True", "replicaFailureMessage": "pods \"train-gpu-x\" is forbidden: exceeded quota"}), want: degraded("ReplicaFailure")},
		"failed":                  {manifest: rayCluster, feedback: with(done, map[string]any{"state": "failed"}), want: degraded("RayClusterFailed")},
		"suspending":              {manifest: suspended, feedback: with(done, map[string]any{"suspending": "True"}), want: progressing("Suspending")},
		"suspended":               {manifest: suspended, feedback: with(done, map[string]any{"suspended": "True", "state": "suspended"}, "headPodReady"), want: verdict{State: "Healthy", Reason: "Suspended"}},
	})
}

const rayJob = `
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: batch-infer, namespace: ml}
spec:
  entrypoint: python /home/ray/infer.py
  shutdownAfterJobFinishes: true
  rayClusterSpec: {headGroupSpec: {rayStartParams: {}, template: {spec: {containers: [{name: ray-head}]}}}}
`

func TestRayJob(t *testing.T) {
	runHealth(t, "rayjobs.ray.io.yaml", map[string]healthCase{
		"no status yet":     {manifest: rayJob, feedback: nil, want: progressing("WaitingForFeedback")},
		"initializing":      {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Initializing"}, want: progressing("JobRunning")},
		"running":           {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Running", "jobStatus": "RUNNING"}, want: progressing("JobRunning")},
		"retrying":          {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Retrying", "jobStatus": "FAILED", "failed": 1}, want: progressing("JobRunning")},
		"suspended":         {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Suspended"}, want: progressing("Suspended")},
		"succeeded":         {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED", "succeeded": 1}, want: completed("RayJobSucceeded")},
		"job failed":        {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Complete", "jobStatus": "FAILED", "failed": 1}, want: failed("RayJobFailed")},
		"job stopped":       {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Complete", "jobStatus": "STOPPED"}, want: failed("RayJobFailed")},
		"deadline exceeded": {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Failed", "reason": "DeadlineExceeded", "message": "The RayJob has passed the activeDeadlineSeconds"}, want: failed("DeadlineExceeded")},
		"submission failed": {manifest: rayJob, feedback: map[string]any{"jobDeploymentStatus": "Failed", "reason": "SubmissionFailed"}, want: failed("SubmissionFailed")},
	})
}

// TestManifestWithoutSpec: a manifest known only from the agent's report of the work carries no spec; the
// interpreters still judge it (the defaults of the kind) instead of failing.
func TestManifestWithoutSpec(t *testing.T) {
	for file, in := range map[string]string{
		"rollouts.argoproj.io.yaml":        "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: x}}",
		"clonesets.apps.kruise.io.yaml":    "{apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, metadata: {name: x}}",
		"clusters.postgresql.cnpg.io.yaml": "{apiVersion: postgresql.cnpg.io/v1, kind: Cluster, metadata: {name: x}}",
		"virtualmachines.kubevirt.io.yaml": "{apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: x}}",
		"rayclusters.ray.io.yaml":          "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: x}}",
	} {
		t.Run(file, func(t *testing.T) {
			v, _ := compile(t, file).Health(input(t, healthCase{manifest: in}), feedback(t, map[string]any{"generation": 1, "observedGeneration": 1, "phase": "x", "printableStatus": "Stopped"}))
			if v.Reason == "InterpreterFailed" {
				t.Errorf("the expression failed: %s", v.Message)
			}
		})
	}
}
