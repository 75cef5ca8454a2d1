package deploy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

// The chart's fleet API server (fleetAPIServer, transparent mode): what it renders, that upgrades keep its
// PKI, and that what it renders runs: the rendered etcd and kube-apiserver commands, started with this repo's
// binaries on the rendered Secrets' files, serve the manager's and the admin's rendered kubeconfigs.

const (
	fleetRelease    = "placement-manifestwork"
	fleetMountPath  = "/etc/placement-manifestwork/fleet"
	fleetKubeconfig = "--fleet-kubeconfig=" + fleetMountPath + "/kubeconfig"
	// The rendered names for the release placement-manifestwork.
	fleetAPIServerName = "placement-manifestwork-fleet-apiserver"
	fleetEtcdName      = "placement-manifestwork-fleet-etcd"
	fleetPKIName       = "placement-manifestwork-fleet-pki"
	fleetManagerKC     = "placement-manifestwork-fleet-kubeconfig"
	fleetAdminKC       = "placement-manifestwork-fleet-admin-kubeconfig"
	notAfterAnnotation = "placement-manifestwork.open-cluster-management.io/not-after"
)

func renderFleet(t *testing.T, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return render(t, fleetRelease, ns, append([]string{"--set", "fleetAPIServer.enabled=true"}, args...)...)
}

// fleetObjects are the objects of the fleet API server (component fleet-apiserver or fleet-etcd).
func fleetObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasPrefix(o.GetLabels()["app.kubernetes.io/component"], "fleet-") || strings.Contains(o.GetName(), "-fleet-") {
			out = append(out, o)
		}
	}
	return out
}

func named(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range ofKind(objs, kind) {
		if o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// secretFiles is a rendered Secret's data and stringData, decoded.
func secretFiles(t *testing.T, o *unstructured.Unstructured) map[string][]byte {
	t.Helper()
	s := convert[corev1.Secret](t, o)
	out := map[string][]byte{}
	for k, v := range s.Data {
		out[k] = v
	}
	for k, v := range s.StringData {
		out[k] = []byte(v)
	}
	return out
}

// managerDeployment is the manager's Deployment among objs: the chart's (component controller-manager) or
// config/default's (control-plane: controller-manager), not the fleet API server's.
func managerDeployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	for _, o := range ofKind(objs, "Deployment") {
		if o.GetLabels()["app.kubernetes.io/component"] == "controller-manager" || o.GetLabels()["control-plane"] == "controller-manager" {
			return convert[appsv1.Deployment](t, o)
		}
	}
	t.Fatal("no manager Deployment rendered")
	return nil
}

func TestFleetAPIServerOffRendersNothing(t *testing.T) {
	byDefault := run(t, helmBin(t), "template", fleetRelease, chartDir, "--namespace", "ns")
	off := run(t, helmBin(t), "template", fleetRelease, chartDir, "--namespace", "ns",
		"--set", "fleetAPIServer.enabled=false", "--set", "fleetAPIServer.kubeconfigSecret=")
	if string(byDefault) != string(off) {
		t.Error("the default values and fleetAPIServer off render differently")
	}
	objs := decodeAll(t, byDefault)
	if got := fleetObjects(objs); len(got) != 0 {
		t.Errorf("fleetAPIServer off renders %v", kinds(got))
	}
	d := managerDeployment(t, objs)
	m := managerContainer(t, d)
	for _, a := range m.Args {
		if strings.HasPrefix(a, "--fleet-kubeconfig") {
			t.Errorf("fleetAPIServer off passes %s", a)
		}
	}
	if len(m.VolumeMounts) != 0 || len(d.Spec.Template.Spec.Volumes) != 0 || len(d.Spec.Template.Annotations) != 0 {
		t.Errorf("fleetAPIServer off mounts %v (volumes %v, annotations %v)", m.VolumeMounts, d.Spec.Template.Spec.Volumes, d.Spec.Template.Annotations)
	}
}

// pinnedVersions are the Kubernetes version hack/tools/kube/go.mod pins and the etcd version kubeadm of that
// version pairs with it (its DefaultEtcdVersion).
func pinnedVersions(t *testing.T) (kube, etcd string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "k8s.io/kubernetes")
	cmd.Dir = filepath.Join(root, "hack", "tools", "kube")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubernetes in hack/tools/kube: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		t.Fatalf("go list -m k8s.io/kubernetes: %q", out)
	}
	constants, err := os.ReadFile(filepath.Join(fields[1], "cmd", "kubeadm", "app", "constants", "constants.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`DefaultEtcdVersion = "([^"]+)"`).FindSubmatch(constants)
	if m == nil {
		t.Fatal("kubeadm's constants.go has no DefaultEtcdVersion")
	}
	return fields[0], string(m[1])
}

func TestFleetAPIServerRender(t *testing.T) {
	for _, set := range []string{"fleetAPIServer.enabled=true", "fleetAPIServer.kubeconfigSecret=fleet"} {
		if out := run(t, helmBin(t), "lint", "--strict", chartDir, "--set", set); !strings.Contains(string(out), "0 chart(s) failed") {
			t.Errorf("helm lint --set %s:\n%s", set, out)
		}
	}
	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-fleet")
	objs := renderFleet(t, ns)

	fleet := fleetObjects(objs)
	if got, want := kinds(fleet), []string{"Deployment", "Secret", "Secret", "Secret", "Service", "Service", "StatefulSet"}; !slices.Equal(got, want) {
		t.Fatalf("fleetAPIServer.enabled renders %v, want %v", got, want)
	}
	for _, o := range fleet {
		if !strings.HasPrefix(o.GetName(), "placement-manifestwork-fleet-") || o.GetNamespace() != ns {
			t.Errorf("%s: want a name with the release's prefix, in the release namespace", describe(o))
		}
	}

	// Images: the pinned Kubernetes version and kubeadm's etcd for it.
	kube, etcdVersion := pinnedVersions(t)
	api := convert[appsv1.Deployment](t, named(t, objs, "Deployment", fleetAPIServerName))
	etcd := convert[appsv1.StatefulSet](t, named(t, objs, "StatefulSet", fleetEtcdName))
	if got := api.Spec.Template.Spec.Containers[0].Image; got != "registry.k8s.io/kube-apiserver:"+kube {
		t.Errorf("kube-apiserver image %s, want the pinned %s", got, kube)
	}
	if got := etcd.Spec.Template.Spec.Containers[0].Image; got != "registry.k8s.io/etcd:"+etcdVersion {
		t.Errorf("etcd image %s, want kubeadm's %s for %s", got, etcdVersion, kube)
	}

	// The flags that make it a fleet API server.
	apiArgs := api.Spec.Template.Spec.Containers[0].Command
	for _, want := range []string{"--authorization-mode=RBAC", "--disable-admission-plugins=StorageObjectInUseProtection",
		"--etcd-servers=https://" + fleetEtcdName + "." + ns + ".svc:2379", "--service-cluster-ip-range=10.96.0.0/12",
		"--service-account-issuer=https://" + fleetAPIServerName + "." + ns + ".svc"} {
		if !slices.Contains(apiArgs, want) {
			t.Errorf("kube-apiserver lacks %s: %q", want, apiArgs)
		}
	}

	// Every file a flag names is mounted from a rendered Secret.
	secrets := map[string]map[string][]byte{}
	for _, o := range ofKind(objs, "Secret") {
		secrets[o.GetName()] = secretFiles(t, o)
	}
	for _, pod := range []struct {
		spec corev1.PodSpec
		args []string
	}{{api.Spec.Template.Spec, apiArgs}, {etcd.Spec.Template.Spec, etcd.Spec.Template.Spec.Containers[0].Command}} {
		files := mountedFiles(t, pod.spec, pod.spec.Containers[0], secrets)
		for _, a := range pod.args {
			_, value, _ := strings.Cut(a, "=")
			if strings.HasPrefix(value, "/etc/") {
				if _, ok := files[value]; !ok {
					t.Errorf("%s: %s is not mounted", pod.spec.Containers[0].Name, a)
				}
			}
		}
	}

	// The PKI: the serving certificates verify for the Services' names, the clients' for client auth, each
	// with its own CA.
	pki := secrets[fleetPKIName]
	apiCA, etcdCA := certPool(t, pki["ca.crt"]), certPool(t, pki["etcd-ca.crt"])
	for _, name := range []string{fleetAPIServerName, fleetAPIServerName + "." + ns, fleetAPIServerName + "." + ns + ".svc",
		fleetAPIServerName + "." + ns + ".svc.cluster.local", "localhost", "127.0.0.1"} {
		verifyCert(t, pki["apiserver.crt"], apiCA, name, x509.ExtKeyUsageServerAuth)
	}
	verifyCert(t, pki["apiserver.crt"], etcdCA, "", -1) // etcd's CA is another: no API server certificate verifies there
	for _, name := range []string{fleetEtcdName + "." + ns + ".svc", fleetEtcdName + "-0." + fleetEtcdName + "." + ns + ".svc", "localhost"} {
		verifyCert(t, pki["etcd-server.crt"], etcdCA, name, x509.ExtKeyUsageServerAuth)
		verifyCert(t, pki["etcd-peer.crt"], etcdCA, name, x509.ExtKeyUsageServerAuth)
	}
	verifyCert(t, pki["apiserver-etcd-client.crt"], etcdCA, "", x509.ExtKeyUsageClientAuth)
	verifyCert(t, pki["etcd-peer.crt"], etcdCA, "", x509.ExtKeyUsageClientAuth)

	// The identities: static tokens with the groups of the values.
	tokens := string(pki["tokens.csv"])
	for _, want := range []string{
		string(pki["manager-token"]) + `,placement-manifestwork-manager,placement-manifestwork-manager,"system:masters"`,
		string(pki["admin-token"]) + `,fleet-admin,fleet-admin,"system:masters"`,
	} {
		if !strings.Contains(tokens, want+"\n") {
			t.Errorf("tokens.csv lacks %q:\n%s", want, tokens)
		}
	}
	if len(pki["manager-token"]) < 64 || string(pki["manager-token"]) == string(pki["admin-token"]) {
		t.Error("the manager's and the admin's tokens must be long and differ")
	}

	// The manager: the flag, the mount, and the kubeconfig's files.
	d := managerDeployment(t, objs)
	m := managerContainer(t, d)
	if !slices.Contains(m.Args, fleetKubeconfig) {
		t.Errorf("the manager's args %q lack %s", m.Args, fleetKubeconfig)
	}
	files := mountedFiles(t, d.Spec.Template.Spec, m, secrets)
	kc, err := clientcmd.Load(files[fleetMountPath+"/kubeconfig"])
	if err != nil {
		t.Fatalf("the manager's kubeconfig: %v", err)
	}
	cluster, user := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster], kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
	if cluster.Server != "https://"+fleetAPIServerName+"."+ns+".svc:443" {
		t.Errorf("the manager's kubeconfig names %s", cluster.Server)
	}
	if string(files[cluster.CertificateAuthority]) != string(pki["ca.crt"]) || string(files[user.TokenFile]) != string(pki["manager-token"]) {
		t.Errorf("the manager's kubeconfig names %s and %s, which are not the mounted CA and token", cluster.CertificateAuthority, user.TokenFile)
	}

	// A renewed PKI restarts the three pods.
	sum := d.Spec.Template.Annotations["checksum/fleet-pki"]
	if sum == "" || api.Spec.Template.Annotations["checksum/fleet-pki"] != sum || etcd.Spec.Template.Annotations["checksum/fleet-pki"] != sum {
		t.Errorf("checksum/fleet-pki differs between the manager %q, kube-apiserver %q and etcd %q", sum,
			api.Spec.Template.Annotations["checksum/fleet-pki"], etcd.Spec.Template.Annotations["checksum/fleet-pki"])
	}

	// etcd keeps its data on a PersistentVolumeClaim by default.
	if len(etcd.Spec.VolumeClaimTemplates) != 1 || etcd.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("etcd's volumeClaimTemplates %+v, want one of 8Gi", etcd.Spec.VolumeClaimTemplates)
	}
	checkHardened(t, d)
	checkHardened(t, api)
	checkHardened(t, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: etcd.Spec.Template}})
	dryRunApply(t, c, w, objs)

	t.Run("persistence off, a StorageClass", func(t *testing.T) {
		objs := renderFleet(t, ns, "--set", "fleetAPIServer.etcd.persistence.enabled=false")
		etcd := convert[appsv1.StatefulSet](t, named(t, objs, "StatefulSet", fleetEtcdName))
		if len(etcd.Spec.VolumeClaimTemplates) != 0 || !slices.ContainsFunc(etcd.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Name == "data" && v.EmptyDir != nil
		}) {
			t.Errorf("persistence off: want an emptyDir, got %+v", etcd.Spec.Template.Spec.Volumes)
		}
		objs = renderFleet(t, ns, "--set", "fleetAPIServer.etcd.persistence.storageClass=fast", "--set", "fleetAPIServer.etcd.persistence.size=20Gi")
		etcd = convert[appsv1.StatefulSet](t, named(t, objs, "StatefulSet", fleetEtcdName))
		pvc := etcd.Spec.VolumeClaimTemplates[0].Spec
		if ptr.Deref(pvc.StorageClassName, "") != "fast" || pvc.Resources.Requests.Storage().Cmp(resource.MustParse("20Gi")) != 0 {
			t.Errorf("the claim %+v, want 20Gi of fast", pvc)
		}
	})

	t.Run("an existing PKI Secret", func(t *testing.T) {
		objs := renderFleet(t, ns, "--set", "fleetAPIServer.certificates.existingSecret=my-pki")
		if got := kinds(ofKind(fleetObjects(objs), "Secret")); len(got) != 1 {
			t.Errorf("with certificates.existingSecret the chart renders %d Secrets, want the manager's kubeconfig only", len(got))
		}
		named(t, objs, "Secret", fleetManagerKC)
		for _, o := range []*unstructured.Unstructured{named(t, objs, "Deployment", fleetAPIServerName), named(t, objs, "StatefulSet", fleetEtcdName)} {
			if !strings.Contains(fmt.Sprint(o.Object["spec"]), "secretName:my-pki") {
				t.Errorf("%s does not mount my-pki", describe(o))
			}
			if strings.Contains(fmt.Sprint(o.Object["spec"]), "checksum/fleet-pki") {
				t.Errorf("%s has a checksum of a PKI the chart does not know", describe(o))
			}
		}
		if !strings.Contains(fmt.Sprint(managerDeployment(t, objs).Spec.Template.Spec.Volumes), "my-pki") {
			t.Error("the manager does not mount its token and CA from my-pki")
		}
	})

	t.Run("an external fleet API server", func(t *testing.T) {
		objs := render(t, fleetRelease, ns, "--set", "fleetAPIServer.kubeconfigSecret=kcp-workspace")
		if got := fleetObjects(objs); len(got) != 0 {
			t.Errorf("fleetAPIServer.kubeconfigSecret renders %v; want only the manager's flag", kinds(got))
		}
		d := managerDeployment(t, objs)
		m := managerContainer(t, d)
		files := mountedFiles(t, d.Spec.Template.Spec, m, map[string]map[string][]byte{"kcp-workspace": {"kubeconfig": []byte("x")}})
		if !slices.Contains(m.Args, fleetKubeconfig) || string(files[fleetMountPath+"/kubeconfig"]) != "x" {
			t.Errorf("the manager gets %q and mounts %v, want %s from kcp-workspace", m.Args, files, fleetKubeconfig)
		}
		dryRunApply(t, c, w, objs)
	})

	t.Run("refused values", func(t *testing.T) {
		for name, tc := range map[string]struct {
			set     []string
			message string
		}{
			"both":              {[]string{"fleetAPIServer.enabled=true", "fleetAPIServer.kubeconfigSecret=x"}, "exclude each other"},
			"a comma in groups": {[]string{"fleetAPIServer.managerGroups={a\\,b}"}, "managerGroups"},
			"no groups":         {[]string{"fleetAPIServer.adminGroups={}"}, "adminGroups"},
			"groups removed":    {[]string{"fleetAPIServer.managerGroups=null"}, "managerGroups"},
			"a bad size":        {[]string{"fleetAPIServer.etcd.persistence.size=lots"}, "size"},
		} {
			t.Run(name, func(t *testing.T) { expectRenderRefused(t, tc.set, tc.message) })
		}
	})
}

// mountedFiles are the files a container sees from the pod's Secret volumes (secret or projected secrets,
// their items or every key), by path, from the given Secrets' files.
func mountedFiles(t *testing.T, spec corev1.PodSpec, c corev1.Container, secrets map[string]map[string][]byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	add := func(mount, secret string, items []corev1.KeyToPath) {
		data, ok := secrets[secret]
		if !ok {
			t.Errorf("%s mounts the Secret %s, which is not rendered", c.Name, secret)
			return
		}
		if items == nil {
			for k := range data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		for _, i := range items {
			v, ok := data[i.Key]
			if !ok {
				t.Errorf("%s mounts %s from the Secret %s, which has no such key", c.Name, i.Key, secret)
			}
			out[filepath.Join(mount, i.Path)] = v
		}
	}
	for _, vm := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != vm.Name {
				continue
			}
			switch {
			case v.Secret != nil:
				add(vm.MountPath, v.Secret.SecretName, v.Secret.Items)
			case v.Projected != nil:
				for _, s := range v.Projected.Sources {
					if s.Secret != nil {
						add(vm.MountPath, s.Secret.Name, s.Secret.Items)
					}
				}
			}
		}
	}
	return out
}

func certPool(t *testing.T, pemData []byte) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		t.Fatal("not a PEM certificate")
	}
	return pool
}

// verifyCert checks that a certificate verifies against roots for name (any, when empty) and usage; a negative
// usage checks that it does not verify at all.
func verifyCert(t *testing.T, pemData []byte, roots *x509.CertPool, name string, usage x509.ExtKeyUsage) {
	t.Helper()
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatal("not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}}
	if usage < 0 {
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageAny}
		if _, err := cert.Verify(opts); err == nil {
			t.Errorf("the certificate of %s verifies against the other CA", cert.Subject.CommonName)
		}
		return
	}
	if _, err := cert.Verify(opts); err != nil {
		t.Errorf("the certificate of %s for %q: %v", cert.Subject.CommonName, name, err)
	}
}

// hubAdminKubeconfig writes a kubeconfig of the envtest hub's administrator, for helm.
func hubAdminKubeconfig(t *testing.T) string {
	t.Helper()
	cfg := hub(t)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["admin"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "admin"
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFleetAPIServerKeepsPKIOnUpgrade renders the chart as `helm upgrade` does, with lookup reading the hub
// (helm template --dry-run=server): the PKI Secret an install left is kept as it is, so an upgrade rotates
// nothing; its leaf certificates are renewed with the same CAs and tokens when they near their not-after or
// when their names change.
func TestFleetAPIServerKeepsPKIOnUpgrade(t *testing.T) {
	c, _ := hubClient(t)
	ctx := context.Background()
	ns := restrictedNamespace(t, c, "pmw-fleet-upgrade")
	server := []string{"--dry-run=server", "--kubeconfig", hubAdminKubeconfig(t)}

	installed := renderFleet(t, ns, server...)
	apply(t, c, named(t, installed, "Secret", fleetPKIName))
	pki := secretFiles(t, named(t, installed, "Secret", fleetPKIName))
	checksum := func(objs []*unstructured.Unstructured) string {
		return managerDeployment(t, objs).Spec.Template.Annotations["checksum/fleet-pki"]
	}

	upgraded := renderFleet(t, ns, server...)
	if got := secretFiles(t, named(t, upgraded, "Secret", fleetPKIName)); !mapsEqual(got, pki) {
		t.Errorf("an upgrade changes the PKI Secret's keys %v", changedKeys(pki, got))
	}
	if a, b := secretFiles(t, named(t, installed, "Secret", fleetAdminKC)), secretFiles(t, named(t, upgraded, "Secret", fleetAdminKC)); !mapsEqual(a, b) {
		t.Error("an upgrade changes the admin kubeconfig")
	}
	if checksum(upgraded) != checksum(installed) {
		t.Error("an upgrade changes checksum/fleet-pki: it would restart the pods for nothing")
	}
	if fresh := secretFiles(t, named(t, renderFleet(t, ns), "Secret", fleetPKIName)); string(fresh["ca.crt"]) == string(pki["ca.crt"]) {
		t.Fatal("helm template without a cluster renders the same CA: the check above proves nothing")
	}

	// Leaf certificates near their end: renewed with the same CAs, service-account key and tokens.
	secret := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: fleetPKIName}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Annotations[notAfterAnnotation] = strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	renewed := renderFleet(t, ns, server...)
	got := secretFiles(t, named(t, renewed, "Secret", fleetPKIName))
	wantChanged := []string{"apiserver-etcd-client.crt", "apiserver-etcd-client.key", "apiserver.crt", "apiserver.key",
		"etcd-peer.crt", "etcd-peer.key", "etcd-server.crt", "etcd-server.key"}
	if changed := changedKeys(pki, got); !slices.Equal(changed, wantChanged) {
		t.Errorf("renewing changes %v, want the leaf certificates %v", changed, wantChanged)
	}
	verifyCert(t, got["apiserver.crt"], certPool(t, pki["ca.crt"]), fleetAPIServerName+"."+ns+".svc", x509.ExtKeyUsageServerAuth)
	notAfter, _ := strconv.ParseInt(named(t, renewed, "Secret", fleetPKIName).GetAnnotations()[notAfterAnnotation], 10, 64)
	if days := time.Until(time.Unix(notAfter, 0)).Hours() / 24; days < 364 || days > 366 {
		t.Errorf("the renewed certificates' not-after is in %.0f days, want 365", days)
	}
	if checksum(renewed) == checksum(installed) {
		t.Error("renewed certificates do not change checksum/fleet-pki: the pods would keep the old ones")
	}

	// A new name in the serving certificate renews the leaves too.
	apply(t, c, named(t, renewed, "Secret", fleetPKIName))
	sans := renderFleet(t, ns, append(server, "--set", "fleetAPIServer.certificates.extraSANs={fleet.example.com,203.0.113.7}")...)
	got2 := secretFiles(t, named(t, sans, "Secret", fleetPKIName))
	for _, name := range []string{"fleet.example.com", "203.0.113.7"} {
		verifyCert(t, got2["apiserver.crt"], certPool(t, pki["ca.crt"]), name, x509.ExtKeyUsageServerAuth)
	}
	if string(got2["manager-token"]) != string(pki["manager-token"]) {
		t.Error("a new name changes the manager's token")
	}
}

func mapsEqual(a, b map[string][]byte) bool { return len(changedKeys(a, b)) == 0 }

// changedKeys are the keys whose values differ between a and b, sorted.
func changedKeys(a, b map[string][]byte) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || string(v) != string(w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestFleetAPIServerRuns runs what the chart renders: the etcd StatefulSet's and the kube-apiserver
// Deployment's commands, with this repo's etcd and kube-apiserver (KUBEBUILDER_ASSETS, hack/kube-binaries.sh),
// on the rendered Secrets' files. Only what a pod has and a test process has not is rewritten: mount paths to
// temporary folders, the Services' names to localhost, ports to free ones, and kube-apiserver's advertise
// address (a pod's own IP) to 127.0.0.1. The manager's rendered kubeconfig (its paths and server rewritten
// likewise, its CA and token kept) then creates a namespace and a Deployment and writes the Deployment's
// status, as transparent mode does; the admin kubeconfig, used as NOTES.txt says, reads them back; no
// controller turns the Deployment into pods.
func TestFleetAPIServerRuns(t *testing.T) {
	assets, err := envhub.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	const ns = "fleet-system"
	objs := renderFleet(t, ns)
	secrets := map[string]map[string][]byte{}
	for _, o := range ofKind(objs, "Secret") {
		secrets[o.GetName()] = secretFiles(t, o)
	}
	api := convert[appsv1.Deployment](t, named(t, objs, "Deployment", fleetAPIServerName))
	etcd := convert[appsv1.StatefulSet](t, named(t, objs, "StatefulSet", fleetEtcdName))
	manager := managerDeployment(t, objs)

	dir := t.TempDir()
	ports := map[string]int{}
	for _, p := range []string{"2379", "2380", "2381", "6443"} {
		ports[p] = freePort(t)
	}
	ports["443"] = ports["6443"] // the Service's port, in the kubeconfigs
	hosts := []string{
		fleetEtcdName + "-0." + fleetEtcdName + "." + ns + ".svc", fleetEtcdName + "." + ns + ".svc",
		fleetAPIServerName + "." + ns + ".svc",
	}
	portRE := regexp.MustCompile(`([:=])(2379|2380|2381|6443|443)\b`)
	// writeMounts writes a container's Secret files under dir/<container>, and returns the rewrite of its paths.
	writeMounts := func(spec corev1.PodSpec, c corev1.Container) []string {
		var pairs []string
		for _, vm := range c.VolumeMounts {
			local := filepath.Join(dir, c.Name, vm.Name)
			if err := os.MkdirAll(local, 0o700); err != nil {
				t.Fatal(err)
			}
			pairs = append(pairs, vm.MountPath, local)
		}
		for p, data := range mountedFiles(t, spec, c, secrets) {
			for i := 0; i < len(pairs); i += 2 {
				if strings.HasPrefix(p, pairs[i]+"/") {
					if err := os.WriteFile(pairs[i+1]+strings.TrimPrefix(p, pairs[i]), data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return pairs
	}
	rewrite := func(paths []string, s string) string {
		pairs := slices.Clone(paths)
		for _, h := range hosts {
			pairs = append(pairs, h, "localhost")
		}
		pairs = append(pairs, "0.0.0.0", "127.0.0.1") // the listen addresses
		s = strings.NewReplacer(pairs...).Replace(s)
		return portRE.ReplaceAllStringFunc(s, func(m string) string { return m[:1] + strconv.Itoa(ports[m[1:]]) })
	}
	start := func(name string, spec corev1.PodSpec, extra ...string) {
		c := spec.Containers[0]
		paths := writeMounts(spec, c)
		var args []string
		for _, a := range c.Command[1:] {
			args = append(args, rewrite(paths, a))
		}
		args = append(args, extra...)
		log := filepath.Join(dir, name+".log")
		p, err := proc.Start(proc.Spec{Name: name, Path: filepath.Join(assets, c.Command[0]), Args: args, Log: log, Grace: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = p.Stop()
			if t.Failed() {
				t.Logf("%s %q:\n%s", name, args, proc.Tail(log, 40))
			}
		})
	}

	start("etcd", etcd.Spec.Template.Spec)
	eventually(t, 30*time.Second, "etcd is ready on its probe", func() error {
		return httpGet(fmt.Sprintf("http://127.0.0.1:%d%s", ports["2381"], etcd.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path), "")
	})
	start("kube-apiserver", api.Spec.Template.Spec, "--advertise-address=127.0.0.1")
	pki := secrets[fleetPKIName]
	anonymous := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, pki["ca.crt"])}}}
	probe := api.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path
	eventually(t, 45*time.Second, "kube-apiserver is ready on its probe, anonymously", func() error {
		resp, err := anonymous.Get(fmt.Sprintf("https://localhost:%d%s", ports["6443"], probe))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", resp.Status, body)
		}
		return nil
	})

	// etcd accepts no client without a certificate of its CA.
	etcdClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certPool(t, pki["etcd-ca.crt"])}}}
	if resp, err := etcdClient.Get(fmt.Sprintf("https://localhost:%d/version", ports["2379"])); err == nil {
		resp.Body.Close()
		t.Errorf("etcd answers a client without a certificate: %s", resp.Status)
	}

	// The manager's kubeconfig, loaded as cmd/main.go loads --fleet-kubeconfig.
	m := managerContainer(t, manager)
	paths := writeMounts(manager.Spec.Template.Spec, m)
	kubeconfig := filepath.Join(dir, m.Name, "fleet-kubeconfig", "kubeconfig")
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, []byte(rewrite(paths, string(data))), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	fleet := fleetClient(t, cfg)
	whoAmI(t, fleet, "the manager", "placement-manifestwork-manager", "system:masters")
	ctx := context.Background()
	if err := fleet.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](6),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	if err := fleet.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	status := client.RawPatch(types.MergePatchType, []byte(`{"status":{"replicas":6,"readyReplicas":6,"observedGeneration":1}}`))
	if err := fleet.Status().Patch(ctx, web, status); err != nil {
		t.Fatalf("the manager cannot write the Deployment's status: %v", err)
	}

	// The admin kubeconfig, as NOTES.txt has users take it: unchanged, the server given apart (--server).
	adminPath := filepath.Join(dir, "fleet.kubeconfig")
	if err := os.WriteFile(adminPath, secrets[fleetAdminKC]["kubeconfig"], 0o600); err != nil {
		t.Fatal(err)
	}
	localServer := fmt.Sprintf("https://localhost:%d", ports["6443"])
	adminCfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: adminPath},
		&clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: localServer}}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	admin := fleetClient(t, adminCfg)
	whoAmI(t, admin, "the admin", "fleet-admin", "system:masters")
	got := &appsv1.Deployment{}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(web), got); err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 6 || got.Status.ReadyReplicas != 6 {
		t.Errorf("the admin reads replicas %d, ready %d; want the manager's 6 and 6", *got.Spec.Replicas, got.Status.ReadyReplicas)
	}
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(kubectl, "--kubeconfig", adminPath, "--server", localServer, "-n", "shop", "get", "deployment", "web", "-o", "name").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "deployment.apps/web" {
			t.Errorf("kubectl with the admin kubeconfig: %v\n%s", err, out)
		}
	}

	// Nothing on the fleet API server makes pods: the Deployment stays a template.
	time.Sleep(2 * time.Second)
	rs := &appsv1.ReplicaSetList{}
	pods := &corev1.PodList{}
	if err := admin.List(ctx, rs, client.InNamespace("shop")); err != nil || len(rs.Items) != 0 {
		t.Errorf("ReplicaSets in shop: %d (%v), want none", len(rs.Items), err)
	}
	if err := admin.List(ctx, pods, client.InNamespace("shop")); err != nil || len(pods.Items) != 0 {
		t.Errorf("Pods in shop: %d (%v), want none", len(pods.Items), err)
	}

	// A wrong token is refused.
	wrong := rest.AnonymousClientConfig(cfg)
	wrong.BearerToken = base64.RawURLEncoding.EncodeToString([]byte("not the manager"))
	if err := fleetClient(t, wrong).List(ctx, &corev1.NamespaceList{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a wrong token lists namespaces: %v, want Unauthorized", err)
	}
}

func fleetClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// whoAmI checks the identity the fleet API server gives a client (kubectl auth whoami).
func whoAmI(t *testing.T, c client.Client, who, user, group string) {
	t.Helper()
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(context.Background(), review); err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	if got := review.Status.UserInfo; got.Username != user || !slices.Contains(got.Groups, group) {
		t.Errorf("%s is %s in %v, want %s in %s", who, got.Username, got.Groups, user, group)
	}
}

// TestFleetAPIServerNotes checks that NOTES.txt tells how to get the admin kubeconfig and reach the server, the
// steps TestFleetAPIServerRuns follows.
func TestFleetAPIServerNotes(t *testing.T) {
	c, _ := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-fleet-notes")
	out := string(run(t, helmBin(t), "install", fleetRelease, chartDir, "--namespace", ns, "--dry-run=server",
		"--kubeconfig", hubAdminKubeconfig(t), "--set", "fleetAPIServer.enabled=true"))
	_, notes, ok := strings.Cut(out, "NOTES:")
	if !ok {
		t.Fatalf("helm install prints no NOTES:\n%s", out)
	}
	for _, want := range []string{
		"kubectl -n " + ns + " get secret " + fleetAdminKC + " -o jsonpath='{.data.kubeconfig}' | base64 -d > fleet.kubeconfig",
		"kubectl -n " + ns + " port-forward svc/" + fleetAPIServerName + " 6443:443",
		"kubectl --kubeconfig fleet.kubeconfig --server https://localhost:6443 get namespaces",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
		}
	}
}
