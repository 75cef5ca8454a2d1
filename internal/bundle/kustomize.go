package bundle

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// RenderKustomize builds the kustomization in dir as `kubectl kustomize dir` does (kustomize's defaults: files
// only from inside dir, no plugins, no helmCharts, no exec or container functions) and returns its objects.
// Errors are one line, naming dir.
func RenderKustomize(dir string) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %s; fix the kustomization", dir, oneLine(err.Error()))
	}
	y, err := resMap.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %s", dir, oneLine(err.Error()))
	}
	return ReadManifests(bytes.NewReader(y), "kustomize "+dir)
}
