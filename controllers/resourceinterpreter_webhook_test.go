package controllers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	dbwebhook "github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/database"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/webhooktest"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// TestHangingWebhookAskedOncePerReconcile: the health of 20 clusters whose interpreter's webhook answers
// nothing is judged in one timeout, not one per cluster: the webhook that timed out is not asked again for the
// other clusters of the reconcile, whose health its failure policy decides at once. The preview runs what a
// reconcile runs up to the writes (gather, the interpreters, the desired state and the health it is judged by).
func TestHangingWebhookAskedOncePerReconcile(t *testing.T) {
	const clusters = 20
	var calls atomic.Int32
	cert := webhooktest.NewCertificate(t, "127.0.0.1")
	server := webhooktest.NewTLSServer(t, cert, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		select { // until the caller goes away
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	timeout := int32(1)
	ri := &workv1alpha1.ResourceInterpreter{
		ObjectMeta: metav1.ObjectMeta{Name: "databases", UID: "ri-uid", Generation: 1},
		Spec: workv1alpha1.ResourceInterpreterSpec{
			Target: workv1alpha1.InterpreterTarget{Group: dbwebhook.Group, Kind: dbwebhook.Kind},
			Webhook: &workv1alpha1.InterpreterWebhook{URL: &server.URL, CABundle: cert.CA, TimeoutSeconds: &timeout,
				Operations: []workv1alpha1.InterpreterOperation{workv1alpha1.OperationInterpretHealth}},
		},
	}
	pmw := &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: previewNamespace},
		Spec: workv1alpha1.PlacementManifestWorkSpec{
			PlacementRef: &workv1alpha1.LocalPlacementReference{Name: "p"},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"` + dbwebhook.Group + `/v1","kind":"` + dbwebhook.Kind + `","metadata":{"name":"orders","namespace":"default"},"spec":{"replicas":1}}`)}}}}},
		},
	}
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("c%02d", i)
	}
	hub := append(decidedPlacement(names...), ri)
	for _, c := range names {
		hub = append(hub, available(c))
	}
	// The works delivered, each reporting its Database applied and available.
	for _, o := range previewDelivered(t, previewHub(hub...), pmw) {
		if w, ok := o.(*workv1.ManifestWork); ok {
			framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkAvailable: metav1.ConditionTrue})
		}
		hub = append(hub, o)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the webhook was called %d times before any work reported", n)
	}

	start := time.Now()
	if _, err := Preview(context.Background(), previewHub(hub...), pmw, PreviewOptions{}); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if n := calls.Load(); n != 1 {
		t.Errorf("the hanging webhook was called %d times for %d clusters in one reconcile, want 1", n, clusters)
	}
	if elapsed > 3*time.Second {
		t.Errorf("the reconcile took %s, want about one timeout (%ds)", elapsed.Round(time.Millisecond), timeout)
	}
}
