package watchlist

import (
	"os"
	"testing"

	clientfeatures "k8s.io/client-go/features"
)

func TestOff(t *testing.T) {
	before := clientfeatures.FeatureGates()
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(before) })
	if !before.Enabled(clientfeatures.WatchListClient) {
		t.Fatal("client-go's default has WatchListClient off: this package has nothing left to do")
	}
	Off()
	Off() // as a second manager in the same process does
	if g, ok := clientfeatures.FeatureGates().(gates); !ok || g.Gates != before {
		t.Fatalf("after two calls the gates are %#v; want client-go's wrapped once", clientfeatures.FeatureGates())
	}
	cases := []struct {
		name, env string
		want      bool
	}{
		{"unset: off", "", false},
		{"turned on", "true", true},
		{"turned off", "false", false},
		{"not a boolean: off", "maybe", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvVar, tc.env) // restored after the case
			if tc.env == "" {
				if err := os.Unsetenv(EnvVar); err != nil {
					t.Fatal(err)
				}
			}
			if got := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient); got != tc.want {
				t.Errorf("WatchListClient enabled = %v, want %v", got, tc.want)
			}
		})
	}
	// The other gates keep client-go's values.
	if got, want := clientfeatures.FeatureGates().Enabled(clientfeatures.InformerResourceVersion), before.Enabled(clientfeatures.InformerResourceVersion); got != want {
		t.Errorf("InformerResourceVersion = %v, want client-go's %v", got, want)
	}
}
