package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

var runStart = time.Now()

// logf prints a progress line with the time since the run started.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%7.1fs] %s\n", time.Since(runStart).Seconds(), fmt.Sprintf(format, args...))
}

func itoa(n int) string { return strconv.Itoa(n) }

func frameworkWorkConditions(w *workv1.ManifestWork, s map[string]metav1.ConditionStatus) {
	framework.WorkConditions(w, s)
}

func frameworkFeedback(w *workv1.ManifestWork, ordinal int, values map[string]any) {
	framework.Feedback(w, ordinal, values)
}
