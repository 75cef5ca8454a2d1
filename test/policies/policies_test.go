package policies

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

const (
	executorPolicy = "placementmanifestwork-executor"
	kindsPolicy    = "placementmanifestwork-allowed-kinds"
	exemptExecutor = "policy.placementmanifestwork.open-cluster-management.io/executor"
	exemptKinds    = "policy.placementmanifestwork.open-cluster-management.io/kinds"
)

// withExecutor sets the template's executor to a ServiceAccount.
func withExecutor(pmw *workv1alpha1.PlacementManifestWork, saNamespace, saName string) *workv1alpha1.PlacementManifestWork {
	pmw.Spec.ManifestWorkTemplate.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: saNamespace, Name: saName},
	}}
	return pmw
}

// app is a PlacementManifestWork carrying only allowed kinds.
func app(name, ns string) *workv1alpha1.PlacementManifestWork {
	return framework.MakePMW(name, ns).Placement("p").
		Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).
		Manifest(framework.Deployment("web", "default", 2)).Obj()
}

// clusterRoleBinding is a manifest no PlacementManifestWork author should deploy by default.
func clusterRoleBinding() map[string]any {
	return map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "take-over"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"kind": "User", "name": "mallory", "apiGroup": "rbac.authorization.k8s.io"}},
	}
}

// refused expects a server-side dry-run create to be refused by a policy with a message containing want. The
// API server loads policies and RBAC changes asynchronously, hence Eventually.
func refused(c client.Client, pmw *workv1alpha1.PlacementManifestWork, policy, want string) {
	Eventually(func(g Gomega) {
		err := c.Create(context.Background(), pmw.DeepCopy(), client.DryRunAll)
		g.Expect(err).To(HaveOccurred())
		g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "refused by admission: %v", err)
		g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("ValidatingAdmissionPolicy '%s'", policy)))
		g.Expect(err.Error()).To(ContainSubstring(want))
	}, timeout, interval).Should(Succeed())
}

// accepted expects a server-side dry-run create to pass admission.
func accepted(c client.Client, pmw *workv1alpha1.PlacementManifestWork) {
	Eventually(func(g Gomega) {
		g.Expect(c.Create(context.Background(), pmw.DeepCopy(), client.DryRunAll)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

var _ = Describe("Admission policies in config/policies", func() {
	// The policies' expressions are compiled when the API server loads them; one that did not compile would
	// refuse every request (failurePolicy: Fail), which the specs accepting compliant objects would catch.
	// (Their type-checking status is written by kube-controller-manager, which envtest does not run.)

	It("grant the manager execute-as for any executor, and nobody else", func(ctx SpecContext) {
		canExecuteAs := func(user string, groups []string) bool {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Group: "work.open-cluster-management.io", Resource: "manifestworks", Verb: "execute-as",
					Namespace: "cluster1", Name: "system:serviceaccount:team-a:deployer",
				},
			}}
			Expect(admin.Create(ctx, sar)).To(Succeed())
			return sar.Status.Allowed
		}
		Eventually(func() bool {
			return canExecuteAs("system:serviceaccount:"+managerNamespace+":placement-manifestwork-controller-manager",
				[]string{"system:serviceaccounts", "system:serviceaccounts:" + managerNamespace, "system:authenticated"})
		}, timeout, interval).Should(BeTrue(), "the manager may write ManifestWorks with any executor")
		Expect(canExecuteAs("alice", []string{"system:authenticated"})).To(BeFalse())
		Expect(canExecuteAs("system:serviceaccount:"+managerNamespace+":default",
			[]string{"system:serviceaccounts", "system:serviceaccounts:" + managerNamespace, "system:authenticated"})).To(BeFalse())
	})

	Context("executor", func() {
		It("refuses a PlacementManifestWork without an executor, or with one its author may not execute as, and accepts one it may", func() {
			ns := fw.NewNamespace("team")
			alice := user("alice", ns)

			refused(alice, app("web", ns), executorPolicy, "spec.manifestWorkTemplate.executor must name a ServiceAccount")
			refused(alice, withExecutor(app("web", ns), ns, "deployer"), executorPolicy,
				fmt.Sprintf("user alice may not execute as system:serviceaccount:%s:deployer", ns))

			mayExecuteAs("alice", ns, ns, "deployer")
			accepted(alice, withExecutor(app("web", ns), ns, "deployer"))
			refused(alice, withExecutor(app("web", ns), ns, "cluster-admin-sa"), executorPolicy,
				fmt.Sprintf("user alice may not execute as system:serviceaccount:%s:cluster-admin-sa", ns))
			// The permission is per namespace: the same grant does not reach another team's namespace.
			other := fw.NewNamespace("team")
			aliceElsewhere := user("alice", other)
			refused(aliceElsewhere, withExecutor(app("web", other), ns, "deployer"), executorPolicy, "user alice may not execute as")
		})

		It("checks whoever changes the spec, and lets writes that leave the spec alone through, such as the manager's finalizer", func(ctx SpecContext) {
			ns := fw.NewNamespace("team")
			alice, bob := user("alice", ns), user("bob", ns)
			mayExecuteAs("alice", ns, ns, "deployer")
			pmw := withExecutor(app("web", ns), ns, "deployer")
			Eventually(func() error { return alice.Create(ctx, pmw) }, timeout, interval).Should(Succeed())

			// Bob may write PlacementManifestWorks but not execute as the deployer. A metadata-only change (what
			// the manager does to add and remove its finalizer) passes.
			Eventually(func(g Gomega) {
				cur := &workv1alpha1.PlacementManifestWork{}
				g.Expect(bob.Get(ctx, client.ObjectKeyFromObject(pmw), cur)).To(Succeed())
				cur.Finalizers = append(cur.Finalizers, "work.open-cluster-management.io/placementmanifestwork-cleanup")
				cur.Labels = map[string]string{"reviewed": "true"}
				g.Expect(bob.Update(ctx, cur)).To(Succeed())
			}, timeout, interval).Should(Succeed())

			// A spec change by Bob is refused, even though the executor stays the same; Alice's passes.
			changeSpec := func(c client.Client) error {
				cur := &workv1alpha1.PlacementManifestWork{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(pmw), cur); err != nil {
					return err
				}
				cur.Spec.ManifestWorkTemplate.Workload.Manifests = app("x", ns).Spec.ManifestWorkTemplate.Workload.Manifests[:1]
				return c.Update(ctx, cur, client.DryRunAll)
			}
			Eventually(func(g Gomega) {
				err := changeSpec(bob)
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).To(ContainSubstring("user bob may not execute as system:serviceaccount:" + ns + ":deployer"))
			}, timeout, interval).Should(Succeed())
			Eventually(func() error { return changeSpec(alice) }, timeout, interval).Should(Succeed())
		})
	})

	Context("allowed kinds", func() {
		It("refuses kinds outside the allow-list, naming them, and accepts the allowed ones", func() {
			ns := fw.NewNamespaceWithLabels("team", map[string]string{exemptExecutor: "exempt"})
			alice := user("alice", ns)

			accepted(alice, app("web", ns))
			risky := framework.MakePMW("risky", ns).Placement("p").
				Manifest(framework.ConfigMap("cfg", "default", nil)).
				Manifest(clusterRoleBinding()).
				Manifest(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "x"}}).Obj()
			refused(alice, risky, kindsPolicy, "carries kinds that are not allowed: ClusterRoleBinding.rbac.authorization.k8s.io, Namespace;")
			refused(alice, risky, kindsPolicy, "ConfigMap placement-manifestwork-system/placementmanifestwork-allowed-kinds")
		})

		It("counts the kinds propagateDependencies may deliver: ConfigMaps, Secrets and ServiceAccounts", func(ctx SpecContext) {
			ns := fw.NewNamespaceWithLabels("team", map[string]string{exemptExecutor: "exempt"})
			alice := user("alice", ns)
			web := app("web", ns)
			web.Spec.PropagateDependencies = true
			accepted(alice, web) // the shipped list allows all three

			original := shippedObject("ConfigMap", "placementmanifestwork-allowed-kinds")
			DeferCleanup(func(ctx SpecContext) {
				Eventually(func(g Gomega) {
					cm := &corev1.ConfigMap{}
					g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: original.GetName()}, cm)).To(Succeed())
					cm.Data["allowedKinds"] = original.Object["data"].(map[string]any)["allowedKinds"].(string)
					g.Expect(admin.Update(ctx, cm)).To(Succeed())
				}, timeout, interval).Should(Succeed())
			})
			Eventually(func(g Gomega) {
				cm := &corev1.ConfigMap{}
				g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: original.GetName()}, cm)).To(Succeed())
				cm.Data["allowedKinds"] = "ConfigMap, Service, Deployment.apps"
				g.Expect(admin.Update(ctx, cm)).To(Succeed())
			}, timeout, interval).Should(Succeed())
			refused(alice, web, kindsPolicy, "not allowed: Secret, ServiceAccount (propagateDependencies may deliver ConfigMaps, Secrets and ServiceAccounts);")
			web.Spec.PropagateDependencies = false
			accepted(alice, web)
		})

		It("follows the administrator's ConfigMap, with whole groups allowed by *.group, and refuses everything without it", func(ctx SpecContext) {
			ns := fw.NewNamespaceWithLabels("team", map[string]string{exemptExecutor: "exempt"})
			alice := user("alice", ns)
			widget := framework.MakePMW("widget", ns).Placement("p").Manifest(map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"},
			}).Obj()
			refused(alice, widget, kindsPolicy, "not allowed: Widget.example.com;")

			original := shippedObject("ConfigMap", "placementmanifestwork-allowed-kinds")
			DeferCleanup(func(ctx SpecContext) {
				cm := &corev1.ConfigMap{}
				err := admin.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: original.GetName()}, cm)
				if apierrors.IsNotFound(err) {
					Expect(admin.Create(ctx, original.DeepCopy())).To(Succeed())
					return
				}
				Expect(err).NotTo(HaveOccurred())
				cm.Data["allowedKinds"] = original.Object["data"].(map[string]any)["allowedKinds"].(string)
				Expect(admin.Update(ctx, cm)).To(Succeed())
			})
			Eventually(func(g Gomega) {
				cm := &corev1.ConfigMap{}
				g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: original.GetName()}, cm)).To(Succeed())
				cm.Data["allowedKinds"] += ", *.example.com"
				g.Expect(admin.Update(ctx, cm)).To(Succeed())
			}, timeout, interval).Should(Succeed())
			accepted(alice, widget)

			Expect(admin.Delete(ctx, original.DeepCopy())).To(Succeed())
			refused(alice, app("web", ns), kindsPolicy, "no params found")
		})
	})

	It("do not apply in namespaces an administrator exempts", func() {
		ns := fw.NewNamespaceWithLabels("platform", map[string]string{exemptExecutor: "exempt", exemptKinds: "exempt"})
		ops := user("ops", ns)
		pmw := framework.MakePMW("anything", ns).Placement("p").Manifest(clusterRoleBinding()).Obj()
		accepted(ops, pmw)
	})
})
