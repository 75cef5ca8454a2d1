package main

import (
	"io"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFlags(t *testing.T) {
	required := []string{"--hub-kubeconfig", "/hub", "--cluster-name", "cluster1"}
	cases := map[string]struct {
		args    []string
		wantErr string
		check   func(t *testing.T, c config)
	}{
		"the defaults": {
			args: required,
			check: func(t *testing.T, c config) {
				got := []string{c.hubKubeconfig, c.clusterName, c.addonName, c.kubeconfig, c.metricsAddr, c.probeAddr, c.guard.Allow.String()}
				if diff := cmp.Diff([]string{"/hub", "cluster1", "score-agent", "", ":8080", ":8081", ""}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]uint16{80, 443}, c.guard.Ports); diff != "" {
					t.Errorf("ports (-want +got):\n%s", diff)
				}
			},
		},
		"every flag": {
			args: append(required, "--addon-name", "latency", "--kubeconfig", "/spoke", "--allow", "127.0.0.1/32,*.corp.example.com",
				"--allow-ports", "8443,80", "--metrics-bind-address", "0", "--health-probe-bind-address", ":9000", "--zap-log-level", "debug"),
			check: func(t *testing.T, c config) {
				got := []string{c.addonName, c.kubeconfig, c.metricsAddr, c.probeAddr, c.guard.Allow.String()}
				if diff := cmp.Diff([]string{"latency", "/spoke", "0", ":9000", "127.0.0.1/32,*.corp.example.com"}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if !c.guard.Allow.AllowsAddr(netip.MustParseAddr("127.0.0.1")) || !c.guard.Allow.AllowsHost("a.corp.example.com") {
					t.Error("--allow is not read")
				}
				if diff := cmp.Diff([]uint16{80, 8443}, c.guard.Ports); diff != "" {
					t.Errorf("ports (-want +got):\n%s", diff)
				}
			},
		},
		"nothing": {
			wantErr: "--hub-kubeconfig is required\n--cluster-name is required",
		},
		"a bad allowlist and port": {
			args:    append(required, "--allow", "http://example.com", "--allow-ports", "0"),
			wantErr: "--allow entry \"http://example.com\": is a URL; write its host name\n--allow-ports entry \"0\" is not a port (1-65535)",
		},
		"an argument": {
			args:    append(required, "extra"),
			wantErr: "unexpected arguments: extra",
		},
		"an unknown flag": {
			args:    []string{"--leader-elect"},
			wantErr: "flag provided but not defined: -leader-elect",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := parseFlags(tc.args, io.Discard)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Fatalf("error =\n%s\nwant\n%s", got, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}
