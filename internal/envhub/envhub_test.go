package envhub

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAPIServerArgs(t *testing.T) {
	cases := map[string]struct {
		opts Options
		want map[string]string
	}{
		"none": {
			want: map[string]string{},
		},
		"audit log": {
			opts: Options{AuditPolicy: "kind: Policy"},
			want: map[string]string{"audit-policy-file": "/run/audit-policy.yaml", "audit-log-path": "/run/audit.log"},
		},
		"caller's flags besides the audit log's": {
			opts: Options{AuditPolicy: "kind: Policy", APIServerArgs: map[string]string{"audit-log-maxsize": "100000"}},
			want: map[string]string{
				"audit-policy-file": "/run/audit-policy.yaml", "audit-log-path": "/run/audit.log", "audit-log-maxsize": "100000",
			},
		},
		"caller's flags win": {
			opts: Options{AuditPolicy: "kind: Policy", APIServerArgs: map[string]string{"audit-log-path": "/elsewhere.log"}},
			want: map[string]string{"audit-policy-file": "/run/audit-policy.yaml", "audit-log-path": "/elsewhere.log"},
		},
		"an empty value is kept": {
			opts: Options{APIServerArgs: map[string]string{"disable-admission-plugins": ""}},
			want: map[string]string{"disable-admission-plugins": ""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, apiServerArgs(tc.opts, "/run")); diff != "" {
				t.Errorf("apiServerArgs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserDefaults(t *testing.T) {
	cases := map[string]struct {
		user, want User
	}{
		"an administrator with <name>.kubeconfig": {
			user: User{Name: "bench-harness"},
			want: User{Name: "bench-harness", Groups: []string{"system:masters"}, Kubeconfig: "bench-harness.kubeconfig"},
		},
		"given groups and file kept": {
			user: User{Name: "viewer", Groups: []string{"viewers"}, Kubeconfig: "kubeconfig"},
			want: User{Name: "viewer", Groups: []string{"viewers"}, Kubeconfig: "kubeconfig"},
		},
		"no group when asked for none": {
			user: User{Name: "nobody", Groups: []string{}},
			want: User{Name: "nobody", Groups: []string{}, Kubeconfig: "nobody.kubeconfig"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.user.withDefaults()); diff != "" {
				t.Errorf("withDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWritesFiles(t *testing.T) {
	cases := map[string]struct {
		opts Options
		want bool
	}{
		"the envtest suites' hub writes nothing": {opts: Options{}},
		"flags and logs alone write nothing":     {opts: Options{APIServerArgs: map[string]string{"v": "2"}}},
		"a user's kubeconfig":                    {opts: Options{Users: []User{{Name: "admin"}}}, want: true},
		"an audit policy":                        {opts: Options{AuditPolicy: "kind: Policy"}, want: true},
		"named certificate folder":               {opts: Options{CertDir: "pki"}, want: true},
		"named etcd folder":                      {opts: Options{EtcdDir: "etcd"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := writesFiles(tc.opts); got != tc.want {
				t.Errorf("writesFiles = %v, want %v", got, tc.want)
			}
		})
	}
}
