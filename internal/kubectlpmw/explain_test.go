package kubectlpmw

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestExplainWriteConflict: a write refused because the PMW changed meanwhile (approve's resourceVersion
// guard) is bad luck, not a broken hub: exit 1, and say to run the command again.
func TestExplainWriteConflict(t *testing.T) {
	h := &hub{server: "https://hub.example.com"}
	gr := schema.GroupResource{Group: "work.open-cluster-management.io", Resource: "placementmanifestworks"}
	err := h.explainWrite(apierrors.NewConflict(gr, "web", errors.New("the object has been modified")), "PlacementManifestWork apps/web")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitUsage {
		t.Fatalf("err = %v, want an exit error with code %d", err, ExitUsage)
	}
	if want := "PlacementManifestWork apps/web changed while this command ran (someone else wrote it); run the command again"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to contain %q", err, want)
	}
}
