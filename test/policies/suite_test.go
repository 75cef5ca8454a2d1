// Package policies checks the admission policies shipped in config/policies and config/validation on a real
// kube-apiserver (envtest, which runs RBAC authorization and the ValidatingAdmissionPolicy admission plugin).
// The tests apply the kustomizations' resources as an administrator would, then act as PlacementManifestWork
// authors through impersonation.
package policies

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/yamlobjects"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework/suite"
)

const (
	timeout  = 30 * time.Second
	interval = 200 * time.Millisecond
	// managerNamespace is where config/default installs the manager, and where the policies' parameters live.
	managerNamespace = "placement-manifestwork-system"
)

var (
	fw = &suite.Framework{Timeout: timeout, Interval: interval}
	// admin is the hub administrator (system:masters).
	admin client.Client
	// shipped are the objects of config/policies and config/validation, as applied.
	shipped []*unstructured.Unstructured
)

func TestPolicies(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PlacementManifestWork admission policies")
}

var _ = BeforeSuite(func() {
	fw.Init()
	admin = fw.Client

	Expect(admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}})).To(Succeed())
	var err error
	shipped, err = kustomizationObjects(filepath.Join(envhub.RepoRoot(), "config", "policies"))
	Expect(err).NotTo(HaveOccurred())
	validation, err := kustomizationObjects(filepath.Join(envhub.RepoRoot(), "config", "validation"))
	Expect(err).NotTo(HaveOccurred())
	shipped = append(shipped, validation...)
	for _, obj := range shipped {
		Expect(admin.Create(context.Background(), obj.DeepCopy())).To(Succeed(), "applying %s %s", obj.GetKind(), obj.GetName())
	}
})

var _ = AfterSuite(func() {
	fw.Teardown()
})

// kustomizationObjects reads the objects of every resource file a kustomization.yaml lists.
func kustomizationObjects(dir string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096).Decode(&k); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, r := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			return nil, err
		}
		objs, err := yamlobjects.DecodeBytes(b, r)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// shippedObject returns a copy of the object of config/policies with that kind and name.
func shippedObject(kind, name string) *unstructured.Unstructured {
	for _, obj := range shipped {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj.DeepCopy()
		}
	}
	Fail(fmt.Sprintf("config/policies has no %s %s", kind, name))
	return nil
}

// user is a client acting as the named user, who may write PlacementManifestWorks in the namespaces given.
func user(name string, namespaces ...string) client.Client {
	ctx := context.Background()
	for _, ns := range namespaces {
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "pmw-author-" + name, Namespace: ns},
			Rules: []rbacv1.PolicyRule{{
				APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"placementmanifestworks"},
				Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
			}},
		}
		Expect(admin.Create(ctx, role)).To(Succeed())
		Expect(admin.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}},
		})).To(Succeed())
	}
	c := rest.CopyConfig(fw.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: name}
	out, err := client.New(c, client.Options{Scheme: controllers.Scheme(), Mapper: admin.RESTMapper()})
	Expect(err).NotTo(HaveOccurred())
	return out
}

// mayExecuteAs grants a user the verb execute-as for a ServiceAccount in a namespace, as an administrator does
// to let them deploy as it.
func mayExecuteAs(userName, ns, saNamespace, saName string) {
	ctx := context.Background()
	executor := fmt.Sprintf("system:serviceaccount:%s:%s", saNamespace, saName)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "execute-as-" + saName + "-" + userName, Namespace: ns},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
			Verbs: []string{"execute-as"}, ResourceNames: []string{executor},
		}},
	}
	Expect(admin.Create(ctx, role)).To(Succeed())
	Expect(admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: userName}},
	})).To(Succeed())
}
