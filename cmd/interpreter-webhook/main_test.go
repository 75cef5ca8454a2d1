package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook/webhooktest"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// TestBinary builds the webhook, serves it with a certificate for its Service's name, and asks it every
// operation through the manager's client.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "interpreter-webhook")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cert := webhooktest.NewCertificate(t, "db-interpreter.webhooks.svc")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, cert.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, cert.Key, 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	server, err := proc.Start(proc.Spec{
		Name:  "interpreter-webhook",
		Path:  bin,
		Args:  []string{"--addr", addr, "--tls-cert", certFile, "--tls-key", keyFile},
		Log:   filepath.Join(dir, "webhook.log"),
		Grace: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := server.Stop(); err != nil {
			t.Error(err)
		}
		if err := server.Err(); err != nil {
			t.Errorf("the webhook exited with %v after TERM; the end of its log:\n%s", err, proc.Tail(server.LogPath(), proc.TailLines))
		}
	})
	if err := server.WaitLog("Serving the interpreter review protocol", 10*time.Second); err != nil {
		t.Fatal(err)
	}

	hook := &workv1alpha1.InterpreterWebhook{
		Service:  &workv1alpha1.WebhookService{Namespace: "webhooks", Name: "db-interpreter", Port: ptr.To[int32](443), Path: ptr.To("/")},
		CABundle: cert.CA,
		Operations: []workv1alpha1.InterpreterOperation{
			workv1alpha1.OperationInterpretHealth, workv1alpha1.OperationInterpretDependency,
			workv1alpha1.OperationReviseReplica, workv1alpha1.OperationAggregateStatus,
		},
		TimeoutSeconds: ptr.To[int32](5),
	}
	client := &interpreterwebhook.Client{ResolveService: func(string, string, int32) (string, error) { return addr, nil }}
	ctx := context.Background()
	object := json.RawMessage(`{"apiVersion":"example.open-cluster-management.io/v1","kind":"Database",` +
		`"metadata":{"name":"orders","namespace":"shop"},"spec":{"replicas":6,"credentialsSecret":"orders-credentials"}}`)
	req := webhook.Request{
		Kind: metav1.GroupVersionKind{Group: "example.open-cluster-management.io", Version: "v1", Kind: "Database"},
		Name: "orders", Namespace: "shop", Object: object,
	}

	revised, err := client.ReviseReplica(ctx, hook, req, 2)
	if err != nil {
		t.Fatalf("ReviseReplica: %v; the end of the webhook's log:\n%s", err, proc.Tail(server.LogPath(), proc.TailLines))
	}
	if want := bytes.Replace(object, []byte(`"replicas":6`), []byte(`"replicas":2`), 1); !bytes.Equal(revised, want) {
		t.Errorf("revised %s, want %s", revised, want)
	}

	health1 := req
	health1.Object, health1.Cluster = revised, "east"
	health1.Status = webhook.Status{"phase": "Ready", "readyInstances": int64(1)}
	verdict, err := client.Health(ctx, hook, health1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(health.Verdict{State: health.Progressing, Reason: "InstancesNotReady", Message: "1 of 2 instances ready"}, verdict); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}

	deps, err := client.Dependencies(ctx, hook, req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]webhook.Dependency{{Kind: "Secret", Name: "orders-credentials"}}, deps); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}

	agg := req
	agg.ClusterStatuses = []webhook.ClusterStatus{
		{Cluster: "east", Status: webhook.Status{"phase": "Ready", "readyInstances": int64(2)}},
		{Cluster: "west", Status: webhook.Status{"phase": "Failed", "readyInstances": int64(0)}},
	}
	fields, err := client.AggregateStatus(ctx, hook, agg)
	if err != nil {
		t.Fatal(err)
	}
	want := []workv1alpha1.AggregatedField{
		{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Value: ptr.To[int64](2), Clusters: 2},
		{Name: "phase", Operation: workv1alpha1.AggregationCount, Clusters: 2, Counts: []workv1alpha1.ValueCount{{Value: "Failed", Clusters: 1}, {Value: "Ready", Clusters: 1}}},
	}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("aggregated (-want +got):\n%s", diff)
	}

	other := req
	other.Kind = metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	_, err = client.Health(ctx, hook, other)
	if interpreterwebhook.ReasonOf(err) != interpreterwebhook.ReasonRejected {
		t.Errorf("health of a Deployment: %v, want %s", err, interpreterwebhook.ReasonRejected)
	}
}
