package scoreagent

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listPage is how many objects one list request of the managed cluster returns.
const listPage = 500

// SpokeLister lists the managed cluster's nodes and pods for the node-headroom plugin. It reads the API
// server at each measurement, a page at a time, rather than caching every pod of the cluster: a generator
// asks at most once per interval (10 s at the least), and the agent stays small.
type SpokeLister struct {
	client.Reader
}

// ListNodes lists every node.
func (l SpokeLister) ListNodes(ctx context.Context) ([]corev1.Node, error) {
	var out []corev1.Node
	err := pages(ctx, l.Reader, &corev1.NodeList{}, func(list client.ObjectList) {
		out = append(out, list.(*corev1.NodeList).Items...)
	})
	return out, err
}

// ListPods lists the pods that may hold resources on their node: neither Succeeded nor Failed (the plugin
// checks again).
func (l SpokeLister) ListPods(ctx context.Context) ([]corev1.Pod, error) {
	running := fields.AndSelectors(
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	)
	var out []corev1.Pod
	err := pages(ctx, l.Reader, &corev1.PodList{}, func(list client.ObjectList) {
		out = append(out, list.(*corev1.PodList).Items...)
	}, client.MatchingFieldsSelector{Selector: running})
	return out, err
}

// pages lists in pages of listPage, handing each to add.
func pages(ctx context.Context, r client.Reader, list client.ObjectList, add func(client.ObjectList), opts ...client.ListOption) error {
	cont := ""
	for {
		o := append([]client.ListOption{client.Limit(listPage), client.Continue(cont)}, opts...)
		if err := r.List(ctx, list, o...); err != nil {
			return err
		}
		add(list)
		if cont = list.GetContinue(); cont == "" {
			return nil
		}
	}
}
