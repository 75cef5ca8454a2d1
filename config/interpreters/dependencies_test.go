package interpreters_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
)

const podTemplate = `
    spec:
      serviceAccountName: web
      imagePullSecrets: [{name: registry}]
      initContainers:
      - name: migrate
        envFrom: [{secretRef: {name: db-admin}}]
      containers:
      - name: app
        envFrom: [{configMapRef: {name: app-config}}, {secretRef: {name: app-secrets}}]
        env:
        - {name: MODE, value: prod}
        - {name: TOKEN, valueFrom: {secretKeyRef: {name: api-token, key: token}}}
        - {name: LEVEL, valueFrom: {configMapKeyRef: {name: logging, key: level}}}
        - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
      - name: proxy
        envFrom: [{configMapRef: {name: app-config}}]
      volumes:
      - {name: conf, configMap: {name: nginx-conf}}
      - {name: tls, secret: {secretName: web-tls}}
      - {name: cache, emptyDir: {}}
`

var podDeps = []interpreter.Dependency{
	{Kind: "ConfigMap", Name: "app-config"}, {Kind: "ConfigMap", Name: "logging"}, {Kind: "ConfigMap", Name: "nginx-conf"},
	{Kind: "Secret", Name: "api-token"}, {Kind: "Secret", Name: "app-secrets"}, {Kind: "Secret", Name: "db-admin"},
	{Kind: "Secret", Name: "registry"}, {Kind: "Secret", Name: "web-tls"},
	{Kind: "ServiceAccount", Name: "web"},
}

func TestDependencies(t *testing.T) {
	cases := map[string]struct {
		file     string
		manifest string
		want     []interpreter.Dependency
	}{
		"Rollout pod template": {
			file:     "rollouts.argoproj.io.yaml",
			manifest: "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:" + podTemplate,
			want:     podDeps,
		},
		"CloneSet pod template": {
			file:     "clonesets.apps.kruise.io.yaml",
			manifest: "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:" + podTemplate,
			want:     podDeps,
		},
		"Knative revision template": {
			file:     "services.serving.knative.dev.yaml",
			manifest: "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: web}\nspec:\n  template:" + podTemplate,
			want:     podDeps,
		},
		"Rollout with a workloadRef has no template": {
			file:     "rollouts.argoproj.io.yaml",
			manifest: "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web}, spec: {workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}}}",
		},
		"default ServiceAccount is not carried": {
			file:     "rollouts.argoproj.io.yaml",
			manifest: "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, metadata: {name: web}, spec: {template: {spec: {serviceAccountName: default, containers: [{name: a}]}}}}",
		},
		"HelmRelease valuesFrom": {
			file: "helmreleases.helm.toolkit.fluxcd.io.yaml",
			manifest: `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: podinfo},
				spec: {valuesFrom: [{kind: ConfigMap, name: podinfo-values}, {kind: Secret, name: podinfo-secrets, valuesKey: creds}], serviceAccountName: deployer}}`,
			want: []interpreter.Dependency{{Kind: "ConfigMap", Name: "podinfo-values"}, {Kind: "Secret", Name: "podinfo-secrets"}, {Kind: "ServiceAccount", Name: "deployer"}},
		},
		"Kustomization substituteFrom and decryption": {
			file: "kustomizations.kustomize.toolkit.fluxcd.io.yaml",
			manifest: `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: apps},
				spec: {postBuild: {substituteFrom: [{kind: ConfigMap, name: cluster-vars}]}, decryption: {provider: sops, secretRef: {name: sops-age}}}}`,
			want: []interpreter.Dependency{{Kind: "ConfigMap", Name: "cluster-vars"}, {Kind: "Secret", Name: "sops-age"}},
		},
		"CloudNativePG secrets": {
			file: "clusters.postgresql.cnpg.io.yaml",
			manifest: `{apiVersion: postgresql.cnpg.io/v1, kind: Cluster, metadata: {name: db},
				spec: {instances: 3, superuserSecret: {name: pg-super}, bootstrap: {initdb: {database: app, secret: {name: app-user}}},
				  certificates: {serverTLSSecret: db-tls, serverCASecret: db-ca},
				  backup: {barmanObjectStore: {destinationPath: "s3://backups/", s3Credentials: {accessKeyId: {name: s3-creds, key: id}, secretAccessKey: {name: s3-creds, key: key}}}}}}`,
			want: []interpreter.Dependency{{Kind: "Secret", Name: "app-user"}, {Kind: "Secret", Name: "db-ca"}, {Kind: "Secret", Name: "db-tls"}, {Kind: "Secret", Name: "pg-super"}, {Kind: "Secret", Name: "s3-creds"}},
		},
		"VirtualMachine volumes": {
			file: "virtualmachines.kubevirt.io.yaml",
			manifest: `{apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: vm},
				spec: {runStrategy: Always, template: {spec: {volumes: [{name: disk, containerDisk: {image: fedora}}, {name: init, cloudInitNoCloud: {secretRef: {name: vm-userdata}}}, {name: cfg, configMap: {name: vm-config}}]}}}}`,
			want: []interpreter.Dependency{{Kind: "ConfigMap", Name: "vm-config"}, {Kind: "Secret", Name: "vm-userdata"}},
		},
		"RayCluster head template": {
			file:     "rayclusters.ray.io.yaml",
			manifest: "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\nspec:\n  headGroupSpec:\n    rayStartParams: {}\n    template:" + strings.ReplaceAll(podTemplate, "\n", "\n  "),
			want:     podDeps,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			raw, err := yaml.YAMLToJSON([]byte(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if err := obj.UnmarshalJSON(raw); err != nil {
				t.Fatal(err)
			}
			got, err := compile(t, tc.file).Dependencies(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("dependencies (-want +got):\n%s", diff)
			}
		})
	}
}
