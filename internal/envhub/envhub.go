// Package envhub starts envtest's control plane, a kube-apiserver and its etcd, for every part of the project
// that needs one: the sandbox's hub, the envtest suites (test/framework), test/deploy, the benchmark, and the
// e2e stack's hub and spokes. Options say where its files go, which CRDs it serves, which users get a
// kubeconfig, whether it writes an audit log and which kube-apiserver flags differ from envtest's.
package envhub

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// DefaultTimeout bounds the start and the stop of kube-apiserver and etcd; envtest's 20 s default is short on
// a busy two-core machine.
const DefaultTimeout = 90 * time.Second

// User is a user the hub signs a client certificate for, with a kubeconfig file.
type User struct {
	Name string
	// Groups are the user's groups; system:masters (an administrator) when nil.
	Groups []string
	// Kubeconfig is the kubeconfig's file name in Options.Dir; "<Name>.kubeconfig" when empty.
	Kubeconfig string
}

// Options describe a control plane. The zero value is the hub of the envtest suites: the hub's CRDs, envtest's
// temporary folders, no file written.
type Options struct {
	// Dir holds the files the hub writes: the kubeconfigs, the audit policy and log, CertDir and EtcdDir. When
	// it is empty and one of them is asked for, a new temporary folder that Stop removes.
	Dir string
	// CertDir (kube-apiserver's certificates and service-account key) and EtcdDir (etcd's data) are folder
	// names in Dir, kept at Stop; envtest's own temporary folders, removed at Stop, when empty.
	CertDir, EtcdDir string
	// Assets is the folder of the kube-apiserver and etcd binaries; AssetsDir() when empty.
	Assets string
	// CRDPaths are the CRD files and folders to install; the hub's, CRDPaths(), when nil.
	CRDPaths []string
	// ExtraCRDPaths are installed besides CRDPaths.
	ExtraCRDPaths []string
	// Users each get a kubeconfig in Dir (Hub.Kubeconfig) and a client configuration (Hub.UserConfig).
	Users []User
	// AuditPolicy is an audit policy (YAML); when set, it is written to Dir/audit-policy.yaml and the API server
	// logs to Dir/audit.log (Hub.AuditLog).
	AuditPolicy string
	// APIServerArgs are kube-apiserver flags, each replacing envtest's value of the flag (an empty value passes
	// "--flag=").
	APIServerArgs map[string]string
	// EtcdArgs are etcd flags, each replacing envtest's value of the flag.
	EtcdArgs map[string]string
	// APIServerOut and EtcdOut receive the output of kube-apiserver and of etcd; discarded when nil.
	APIServerOut, EtcdOut io.Writer
	// Timeout bounds the start and the stop of the control plane; DefaultTimeout when zero.
	Timeout time.Duration
}

// Hub is a running control plane.
type Hub struct {
	// Env is envtest's environment: its ControlPlane tells the processes' folders and flags.
	Env *envtest.Environment
	// Config is envtest's administrator's client configuration.
	Config *rest.Config
	// Dir is Options.Dir, or the temporary folder Start made; empty when the hub writes no file.
	Dir string
	// AuditLog is the audit log's path; empty without Options.AuditPolicy.
	AuditLog string

	users     map[string]user
	removeDir bool
}

// user is a User's kubeconfig file and client configuration.
type user struct {
	kubeconfig string
	config     *rest.Config
}

// Start starts kube-apiserver and etcd, installs the CRDs and adds the users. On error nothing is left running.
func Start(o Options) (_ *Hub, err error) {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.CRDPaths == nil {
		if o.CRDPaths, err = CRDPaths(); err != nil {
			return nil, err
		}
	}
	if o.Assets == "" {
		if o.Assets, err = AssetsDir(); err != nil {
			return nil, err
		}
	}
	h := &Hub{Dir: o.Dir, users: map[string]user{}}
	if h.Dir == "" && writesFiles(o) {
		if h.Dir, err = os.MkdirTemp("", "envhub-"); err != nil {
			return nil, fmt.Errorf("creating the hub's folder: %w", err)
		}
		h.removeDir = true
	} else if h.Dir != "" {
		if err := os.MkdirAll(h.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating the hub's folder: %w", err)
		}
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Stop())
		}
	}()

	api := &envtest.APIServer{Out: o.APIServerOut, Err: o.APIServerOut}
	etcd := &envtest.Etcd{Out: o.EtcdOut, Err: o.EtcdOut}
	if o.CertDir != "" {
		api.CertDir = filepath.Join(h.Dir, o.CertDir)
	}
	if o.EtcdDir != "" {
		etcd.DataDir = filepath.Join(h.Dir, o.EtcdDir)
	}
	for _, d := range []string{api.CertDir, etcd.DataDir} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if o.AuditPolicy != "" {
		h.AuditLog = filepath.Join(h.Dir, auditLog)
		if err := os.WriteFile(filepath.Join(h.Dir, auditPolicyFile), []byte(o.AuditPolicy), 0o600); err != nil {
			return nil, fmt.Errorf("writing the audit policy: %w", err)
		}
	}
	args := api.Configure()
	for flag, value := range apiServerArgs(o, h.Dir) {
		args.Set(flag, value)
	}
	for flag, value := range o.EtcdArgs {
		etcd.Configure().Set(flag, value)
	}

	h.Env = &envtest.Environment{
		ControlPlane:             envtest.ControlPlane{APIServer: api, Etcd: etcd},
		CRDDirectoryPaths:        append(append([]string{}, o.CRDPaths...), o.ExtraCRDPaths...),
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    o.Assets,
		ControlPlaneStartTimeout: o.Timeout,
		ControlPlaneStopTimeout:  o.Timeout,
	}
	if h.Config, err = h.Env.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	for _, u := range o.Users {
		if err := h.addUser(u); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// The audit policy's and log's file names in Dir.
const (
	auditPolicyFile = "audit-policy.yaml"
	auditLog        = "audit.log"
)

// writesFiles tells whether a hub of these options writes files of its own, so needs a Dir.
func writesFiles(o Options) bool {
	return len(o.Users) > 0 || o.AuditPolicy != "" || o.CertDir != "" || o.EtcdDir != ""
}

// apiServerArgs are the kube-apiserver flags Start sets over envtest's: the audit log's when there is a
// policy, then o.APIServerArgs, which win.
func apiServerArgs(o Options, dir string) map[string]string {
	args := map[string]string{}
	if o.AuditPolicy != "" {
		args["audit-policy-file"] = filepath.Join(dir, auditPolicyFile)
		args["audit-log-path"] = filepath.Join(dir, auditLog)
	}
	for flag, value := range o.APIServerArgs {
		args[flag] = value
	}
	return args
}

// withDefaults is u with its defaults filled in: system:masters and "<Name>.kubeconfig".
func (u User) withDefaults() User {
	if u.Groups == nil {
		u.Groups = []string{"system:masters"}
	}
	if u.Kubeconfig == "" {
		u.Kubeconfig = u.Name + ".kubeconfig"
	}
	return u
}

// addUser signs a certificate for u and writes its kubeconfig.
func (h *Hub) addUser(u User) error {
	u = u.withDefaults()
	au, err := h.Env.AddUser(envtest.User{Name: u.Name, Groups: u.Groups}, nil)
	if err != nil {
		return fmt.Errorf("adding user %s: %w", u.Name, err)
	}
	kc, err := au.KubeConfig()
	if err != nil {
		return fmt.Errorf("writing the kubeconfig of %s: %w", u.Name, err)
	}
	path := filepath.Join(h.Dir, u.Kubeconfig)
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig of %s: %w", u.Name, err)
	}
	h.users[u.Name] = user{kubeconfig: path, config: au.Config()}
	return nil
}

// Kubeconfig is the path of the named user's kubeconfig; empty for a user not in Options.Users.
func (h *Hub) Kubeconfig(name string) string { return h.users[name].kubeconfig }

// UserConfig is a copy of the named user's client configuration; nil for a user not in Options.Users.
func (h *Hub) UserConfig(name string) *rest.Config {
	u, ok := h.users[name]
	if !ok {
		return nil
	}
	return rest.CopyConfig(u.config)
}

// Stop stops kube-apiserver and etcd, waits for them to exit and removes the folder Start made, if it made one.
func (h *Hub) Stop() error {
	var errs []error
	if h.Env != nil {
		if err := h.Env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping kube-apiserver and etcd: %w", err))
		}
	}
	if h.removeDir {
		if err := os.RemoveAll(h.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
