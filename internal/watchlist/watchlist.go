// Package watchlist turns client-go's streaming lists (the WatchListClient feature, on by default since
// client-go 1.35) off for the manager's informers, which then list with a plain LIST as before.
//
// Why: an informer lists again when its watch has fallen out of the API server's watch cache, which on a hub of
// 50,000 works happens while agents report by the hundred a second. Streamed, that relist goes through the same
// watch channel the API server closes when a watcher cannot keep up with new events, so it was cut off and
// started over again and again, the manager's cache stood still for minutes, and the repeated streams of
// 50,000 works slowed the hub's delivery to every watcher (docs/performance.md, runs N and O). A LIST is one
// response, which new events cannot cut off. The ManifestWork informer lists whatever the gate says
// (internal/trimmedlist opts out of streamed lists); Off is for the manager's other informers.
package watchlist

import (
	"os"
	"strconv"

	clientfeatures "k8s.io/client-go/features"
)

// EnvVar turns streaming lists back on ("true") or off, as client-go reads it.
const EnvVar = "KUBE_FEATURE_WatchListClient"

// gates are client-go's feature gates with WatchListClient off unless EnvVar says otherwise.
type gates struct{ clientfeatures.Gates }

func (g gates) Enabled(f clientfeatures.Feature) bool {
	if f != clientfeatures.WatchListClient {
		return g.Gates.Enabled(f)
	}
	if v, ok := os.LookupEnv(EnvVar); ok {
		if on, err := strconv.ParseBool(v); err == nil {
			return on
		}
	}
	return false
}

// Off turns streaming lists off for the process, unless EnvVar turns them on. Call it before the first client
// is built: client-go reads the gate when an informer starts. Every process that runs the manager calls it
// (cmd/main.go, the sandbox, the envtest suites' managers), so a second call changes nothing.
func Off() {
	if _, done := clientfeatures.FeatureGates().(gates); done {
		return
	}
	clientfeatures.ReplaceFeatureGates(gates{clientfeatures.FeatureGates()})
}
