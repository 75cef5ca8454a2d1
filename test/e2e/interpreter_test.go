//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// The Database kind of this spec is the one the reference interpreter webhook describes
// (internal/interpreterwebhook/database): spec.replicas, status.phase (Provisioning, Ready, Failed) and
// status.readyInstances.
const (
	databaseGroup   = "example.open-cluster-management.io"
	databaseKind    = "Database"
	databasePlural  = "databases"
	databaseVersion = "v1"

	phaseProvisioning = "Provisioning"
	phaseReady        = "Ready"
	phaseFailed       = "Failed"

	// provisionFor is how long the stand-in operator reports a new or changed Database Provisioning: about one
	// agent status sync, so the hub can see it.
	provisionFor = 2 * time.Second
)

var databaseGVK = schema.GroupVersionKind{Group: databaseGroup, Version: databaseVersion, Kind: databaseKind}

// databaseHealth judges a Database on one cluster from its reported phase and ready instances against the
// cluster's share. Every branch returns a map of strings: CEL wants one type.
const databaseHealth = `has(status.phase) && status.phase == 'Failed'
  ? {'state': 'Degraded', 'reason': 'DatabaseFailed', 'message': 'the database failed: restore it from a backup'}
  : has(status.phase) && status.phase == 'Ready' && has(status.readyInstances) && status.readyInstances >= object.spec.replicas
    ? {'state': 'Healthy', 'reason': 'DatabaseReady', 'message': 'every instance is ready'}
    : {'state': 'Progressing', 'reason': 'DatabaseProvisioning', 'message': 'instances are being provisioned'}`

// The interpreter's health message for a failed database, as the hub must report it.
const databaseFailedMessage = "the database failed: restore it from a backup"

// A custom kind end to end, with nothing of it known to the manager but a ResourceInterpreter: the Database
// CRD installed on every spoke, a stand-in operator in this process writing the Databases' status on the spokes'
// API servers, OCM's real work agents applying the PlacementManifestWork's share of a Database on each spoke and
// reporting the feedback the interpreter asked for, and the hub following it through healthy, degraded and back.
var _ = Describe("A custom kind described by a ResourceInterpreter", Ordered, func() {
	const total = 6
	var (
		ns  string
		pmw *workv1alpha1.PlacementManifestWork
		op  *databaseOperator
	)

	BeforeAll(func(ctx SpecContext) {
		for _, c := range stk.Spokes {
			installDatabaseCRD(ctx, c.Name)
		}
		// The stand-in operator outlives BeforeAll's context: it runs until the container's cleanup.
		opCtx, stop := context.WithCancel(context.Background())
		op = startDatabaseOperator(opCtx, clusters)
		DeferCleanup(func() {
			stop()
			op.wait()
		})

		ri := databaseInterpreter()
		Expect(hub.Create(ctx, ri)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hub.Delete(ctx, ri))).To(Succeed())
		})
		Eventually(func(g Gomega) {
			got := &workv1alpha1.ResourceInterpreter{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(ri), got)).To(Succeed())
			c := meta.FindStatusCondition(got.Status.Conditions, workv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil(), "the interpreter's Ready condition")
			g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"True", workv1alpha1.ReasonInterpreterAccepted}), c.Message)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())

		ns = newNamespace(ctx, "interpreter")
		Expect(hub.Create(ctx, selectingPlacement("orders", ns))).To(Succeed())
		// No fieldPath: the interpreter's replicas say .spec.replicas.
		pmw = framework.MakePMW("orders", ns).Placement("orders").
			Manifest(database("orders", ns, total)).
			Strategy(workv1alpha1.DistributionStrategy{
				Name: "orders", Namespace: ns, Group: databaseGroup, Kind: databaseKind,
				Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance},
			}).Obj()
	})

	AfterAll(func(ctx SpecContext) {
		if pmw != nil {
			deletePMW(ctx, pmw)
		}
	})

	// spokesRun asserts that every spoke holds its share of the Database and that the operator reports it in
	// phase with that many ready instances; it returns the shares.
	spokesRun := func(ctx context.Context, g Gomega, phaseOf func(cluster string) string) map[string]int64 {
		shares := map[string]int64{}
		for _, c := range clusters {
			db := spokeDatabase(ctx, g, c, ns, "orders")
			replicas, _, _ := unstructured.NestedInt64(db.Object, "spec", "replicas")
			phase, _, _ := unstructured.NestedString(db.Object, "status", "phase")
			ready, _, _ := unstructured.NestedInt64(db.Object, "status", "readyInstances")
			want := phaseOf(c)
			wantReady := replicas
			if want == phaseFailed {
				wantReady = 0
			}
			g.Expect([]any{phase, ready}).To(Equal([]any{want, wantReady}), "status phase/readyInstances of the Database on %s", c)
			shares[c] = replicas
		}
		return shares
	}
	allReady := func(string) string { return phaseReady }

	// agentsReport asserts that each work asks for the interpreter's feedback and that the real agent reported
	// it for the current generation: pmw.readyInstances and pmw.phase as the spoke's status has them.
	agentsReport := func(ctx context.Context, g Gomega, shares map[string]int64, phaseOf func(string) string) {
		ws := works(ctx, g, pmw)
		g.Expect(ws).To(HaveLen(len(clusters)), "ManifestWorks on the hub")
		for _, w := range ws {
			var rules []string
			for _, mc := range w.Spec.ManifestConfigs {
				g.Expect(mc.ResourceIdentifier).To(Equal(workv1.ResourceIdentifier{Group: databaseGroup, Resource: databasePlural, Namespace: ns, Name: "orders"}))
				for _, r := range mc.FeedbackRules {
					for _, p := range r.JsonPaths {
						rules = append(rules, p.Name+"="+p.Path)
					}
				}
			}
			g.Expect(rules).To(ConsistOf(health.FeedbackPrefix+"readyInstances=.status.readyInstances", health.FeedbackPrefix+"phase=.status.phase",
				HavePrefix(health.FeedbackPrefix+health.TemplateHash+"=")), // the template marker
				"feedback rules of the work of %s", w.Namespace)

			g.Expect(w.Status.ResourceStatus.Manifests).To(HaveLen(1), "manifests the agent of %s reported", w.Namespace)
			m := w.Status.ResourceStatus.Manifests[0]
			g.Expect(m.ResourceMeta.Resource).To(Equal(databasePlural), "the resource the agent of %s mapped", w.Namespace)
			values := map[string]any{}
			for _, v := range m.StatusFeedbacks.Values {
				switch {
				case v.Value.Integer != nil:
					values[v.Name] = *v.Value.Integer
				case v.Value.String != nil:
					values[v.Name] = *v.Value.String
				}
			}
			wantReady := shares[w.Namespace]
			if phaseOf(w.Namespace) == phaseFailed {
				wantReady = 0
			}
			g.Expect(values).To(Equal(map[string]any{
				health.FeedbackPrefix + "readyInstances": wantReady, health.FeedbackPrefix + "phase": phaseOf(w.Namespace),
				health.FeedbackPrefix + health.TemplateHash: w.Annotations[workv1alpha1.AnnotationTemplateHash],
			}), "status feedback the agent of %s reported", w.Namespace)
		}
	}

	// aggregated reads status.manifests[0].aggregated, by name.
	aggregated := func(g Gomega, got *workv1alpha1.PlacementManifestWork) map[string]workv1alpha1.AggregatedField {
		g.Expect(got.Status.Manifests).To(HaveLen(1), "status.manifests")
		out := map[string]workv1alpha1.AggregatedField{}
		for _, a := range got.Status.Manifests[0].Aggregated {
			out[a.Name] = a
		}
		return out
	}

	It("splits the Database by the interpreter's replicas, and reports it Ready from the agents' feedback", func(ctx SpecContext) {
		start := time.Now()
		Expect(hub.Create(ctx, pmw)).To(Succeed())

		var shares map[string]int64
		Eventually(func(g Gomega) {
			shares = spokesRun(ctx, g, allReady)
			g.Expect(shares).To(Equal(map[string]int64{clusters[0]: 2, clusters[1]: 2, clusters[2]: 2}), "shares of spec.replicas on the spokes")
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			// Ready must never come before every spoke's operator has said so.
			mustHold(func(g Gomega) {
				if c := condition(got, workv1alpha1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == got.Generation {
					spokesRun(ctx, g, allReady)
				}
			})
			expectAllAvailable(g, got, 3)
			g.Expect(got.Status.Splits).To(HaveLen(1), "status.splits")
			sp := got.Status.Splits[0]
			g.Expect([]any{sp.FieldPath, sp.Total, sp.Placed, sp.Unplaced}).To(Equal([]any{".spec.replicas", int32(total), int32(total), int32(0)}), "status.splits[0]")
			expectHealthy(g, manifestSummary(g, got, databaseKind, "orders"), 3)
			agg := aggregated(g, got)
			g.Expect(agg["readyInstances"]).To(Equal(workv1alpha1.AggregatedField{
				Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Value: ptrTo(int64(total)), Clusters: 3,
			}), "aggregated readyInstances")
			g.Expect(agg["phase"]).To(Equal(workv1alpha1.AggregatedField{
				Name: "phase", Operation: workv1alpha1.AggregationCount, Counts: []workv1alpha1.ValueCount{{Value: phaseReady, Clusters: 3}}, Clusters: 3,
			}), "aggregated phase")
			agentsReport(ctx, g, shares, allReady)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("reports the cluster whose database fails Degraded with the interpreter's message, and counts it Failed", func(ctx SpecContext) {
		failing := clusters[1]
		phaseOf := func(c string) string {
			if c == failing {
				return phaseFailed
			}
			return phaseReady
		}
		start := time.Now()
		op.setFailed(failing, true)

		var shares map[string]int64
		Eventually(func(g Gomega) {
			shares = spokesRun(ctx, g, phaseOf)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			st := got.Status
			g.Expect(st.PlacedManifestWorkSummary).To(Equal(workv1alpha1.PlacedManifestWorkSummary{Total: 3, Applied: 3, Available: 2, Degraded: 1}),
				"status.placedManifestWorkSummary")
			g.Expect(st.UnhealthyClusters).To(ConsistOf(SatisfyAll(
				HaveField("Cluster", failing), HaveField("State", workv1alpha1.ClusterDegraded),
				HaveField("Message", ContainSubstring(databaseFailedMessage)))), "status.unhealthyClusters")
			g.Expect(condition(got, workv1alpha1.ConditionReady)).To(HaveField("Status", metav1.ConditionFalse), "Ready")
			m := manifestSummary(g, got, databaseKind, "orders")
			g.Expect([]int32{m.Healthy, m.Progressing, m.Degraded}).To(Equal([]int32{2, 0, 1}), "healthy/progressing/degraded of the Database")
			agg := aggregated(g, got)
			g.Expect(agg["phase"].Counts).To(ConsistOf(
				workv1alpha1.ValueCount{Value: phaseReady, Clusters: 2}, workv1alpha1.ValueCount{Value: phaseFailed, Clusters: 1}), "aggregated phase")
			g.Expect(agg["readyInstances"].Value).To(HaveValue(Equal(int64(total)-shares[failing])), "aggregated readyInstances")
			agentsReport(ctx, g, shares, phaseOf)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})

	It("recovers when the database is Ready again", func(ctx SpecContext) {
		start := time.Now()
		op.setFailed(clusters[1], false)

		var shares map[string]int64
		Eventually(func(g Gomega) {
			shares = spokesRun(ctx, g, allReady)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseSpokes, start)

		Eventually(func(g Gomega) {
			got := getPMW(ctx, g, pmw)
			expectAllAvailable(g, got, 3)
			g.Expect(got.Status.UnhealthyClusters).To(BeEmpty(), "status.unhealthyClusters")
			expectHealthy(g, manifestSummary(g, got, databaseKind, "orders"), 3)
			agg := aggregated(g, got)
			g.Expect(agg["phase"].Counts).To(Equal([]workv1alpha1.ValueCount{{Value: phaseReady, Clusters: 3}}), "aggregated phase")
			g.Expect(agg["readyInstances"].Value).To(HaveValue(Equal(int64(total))), "aggregated readyInstances")
			agentsReport(ctx, g, shares, allReady)
		}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
		converged(phaseHub, start)
	})
})

// databaseInterpreter describes Database: split by .spec.replicas, feedback of readyInstances and phase,
// health from them, readyInstances summed and phases counted across clusters.
func databaseInterpreter() *workv1alpha1.ResourceInterpreter {
	return &workv1alpha1.ResourceInterpreter{
		ObjectMeta: metav1.ObjectMeta{Name: databasePlural + "." + databaseGroup},
		Spec: workv1alpha1.ResourceInterpreterSpec{
			Target:   workv1alpha1.InterpreterTarget{Group: databaseGroup, Kind: databaseKind},
			Replicas: []string{".spec.replicas"},
			StatusFeedback: []workv1alpha1.InterpreterFeedback{
				{Name: "readyInstances", JSONPath: ".status.readyInstances"},
				{Name: "phase", JSONPath: ".status.phase"},
			},
			Health: &workv1alpha1.InterpreterHealth{Expression: databaseHealth},
			Aggregation: []workv1alpha1.InterpreterAggregation{
				{Feedback: "readyInstances", Operation: workv1alpha1.AggregationSum},
				{Feedback: "phase", Operation: workv1alpha1.AggregationCount},
			},
		},
	}
}

// database is a Database manifest.
func database(name, namespace string, replicas int) map[string]any {
	return map[string]any{
		"apiVersion": databaseGroup + "/" + databaseVersion, "kind": databaseKind,
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"replicas": replicas},
	}
}

// installDatabaseCRD creates the Database CRD (with the status subresource, so the agent's applies and the
// operator's status writes do not overwrite each other) on a spoke through its API server, and waits until it
// is served. The work agent needs no RBAC for it here: the stack runs it with the spoke's admin kubeconfig
// (system:masters). A klusterlet's work agent (klusterlet-work-sa) would need a ClusterRole for databases
// labelled open-cluster-management.io/aggregate-to-work=true, which the klusterlet aggregates into its role;
// nothing here would aggregate one, so the spec does not pretend to grant it.
func installDatabaseCRD(ctx context.Context, cluster string) {
	c := stk.Spoke(cluster).Client
	str := map[string]any{"type": "string"}
	integer := map[string]any{"type": "integer", "format": "int64"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": databasePlural + "." + databaseGroup},
		"spec": map[string]any{
			"group": databaseGroup, "scope": "Namespaced",
			"names": map[string]any{"kind": databaseKind, "listKind": databaseKind + "List", "plural": databasePlural, "singular": "database"},
			"versions": []any{map[string]any{
				"name": databaseVersion, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"spec": map[string]any{"type": "object", "properties": map[string]any{
							"replicas": map[string]any{"type": "integer", "format": "int32", "minimum": 0},
						}},
						"status": map[string]any{"type": "object", "properties": map[string]any{
							"phase": str, "readyInstances": integer, "observedGeneration": integer,
						}},
					},
				}},
			}},
		},
	}}
	if err := c.Create(ctx, crd); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred(), "creating the Database CRD on %s", cluster)
	}
	Eventually(func(g Gomega) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(crd.GroupVersionKind())
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), got)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		g.Expect(conds).To(ContainElement(SatisfyAll(HaveKeyWithValue("type", "Established"), HaveKeyWithValue("status", "True"))),
			"the Database CRD on %s is not established", cluster)
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(databaseGVK.GroupVersion().WithKind(databaseKind + "List"))
		g.Expect(c.List(ctx, list)).To(Succeed(), "listing Databases on %s", cluster)
	}).WithContext(ctx).WithTimeout(convergeTimeout).WithPolling(poll).Should(Succeed())
}

// spokeDatabase reads a Database on a spoke.
func spokeDatabase(ctx context.Context, g Gomega, cluster, namespace, name string) *unstructured.Unstructured {
	db := &unstructured.Unstructured{}
	db.SetGroupVersionKind(databaseGVK)
	g.Expect(stk.Spoke(cluster).Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, db)).
		To(Succeed(), "Database %s/%s on %s", namespace, name, cluster)
	return db
}

// databaseOperator stands in for a database operator on every spoke: it writes each Database's status on the
// spoke's API server, Provisioning (no ready instance) for provisionFor after it first sees a generation, then
// Ready with readyInstances = spec.replicas; on a spoke set failed, Failed with no ready instance.
type databaseOperator struct {
	mu     sync.Mutex
	failed map[string]bool
	// provisioning records when the operator started provisioning a Database's generation.
	provisioning map[string]provisioningSince
	done         sync.WaitGroup
}

type provisioningSince struct {
	generation int64
	at         time.Time
}

// startDatabaseOperator runs the operator for the clusters until ctx ends.
func startDatabaseOperator(ctx context.Context, clusters []string) *databaseOperator {
	op := &databaseOperator{failed: map[string]bool{}, provisioning: map[string]provisioningSince{}}
	for _, c := range clusters {
		op.done.Add(1)
		go func() {
			defer GinkgoRecover()
			defer op.done.Done()
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if err := op.sync(ctx, c); err != nil && ctx.Err() == nil {
						GinkgoWriter.Printf("database operator on %s: %v\n", c, err)
					}
				}
			}
		}()
	}
	return op
}

// setFailed makes the Databases of a cluster fail, or recover.
func (op *databaseOperator) setFailed(cluster string, failed bool) {
	op.mu.Lock()
	defer op.mu.Unlock()
	op.failed[cluster] = failed
}

func (op *databaseOperator) wait() { op.done.Wait() }

// sync writes the status of every Database on one spoke; a conflict is left for the next round.
func (op *databaseOperator) sync(ctx context.Context, cluster string) error {
	c := stk.Spoke(cluster).Client
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(databaseGVK.GroupVersion().WithKind(databaseKind + "List"))
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("listing Databases: %w", err)
	}
	for i := range list.Items {
		db := &list.Items[i]
		if db.GetDeletionTimestamp() != nil {
			continue
		}
		want := op.desiredStatus(cluster, db, time.Now())
		have, _, _ := unstructured.NestedMap(db.Object, "status")
		if equalStatus(have, want) {
			continue
		}
		db.Object["status"] = want
		if err := c.Status().Update(ctx, db); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("updating the status of Database %s/%s: %w", db.GetNamespace(), db.GetName(), err)
		}
	}
	return nil
}

// desiredStatus is the status the operator wants a Database to have now.
func (op *databaseOperator) desiredStatus(cluster string, db *unstructured.Unstructured, now time.Time) map[string]any {
	op.mu.Lock()
	defer op.mu.Unlock()
	key := cluster + "/" + string(db.GetUID())
	replicas, _, _ := unstructured.NestedInt64(db.Object, "spec", "replicas")
	status := map[string]any{"observedGeneration": db.GetGeneration(), "readyInstances": int64(0)}
	if op.failed[cluster] {
		// Recovering provisions again.
		delete(op.provisioning, key)
		status["phase"] = phaseFailed
		return status
	}
	p, ok := op.provisioning[key]
	if !ok || p.generation != db.GetGeneration() {
		p = provisioningSince{generation: db.GetGeneration(), at: now}
		op.provisioning[key] = p
	}
	if now.Sub(p.at) < provisionFor {
		status["phase"] = phaseProvisioning
		return status
	}
	status["phase"] = phaseReady
	status["readyInstances"] = replicas
	return status
}

// equalStatus compares a status read from the API server (integers as int64) with a desired one.
func equalStatus(have, want map[string]any) bool {
	if len(have) != len(want) {
		return false
	}
	for k, v := range want {
		if fmt.Sprint(have[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func ptrTo[T any](v T) *T { return &v }
