// Package labelindextest gives tests a client with labelindex's indexes that refuses label selectors.
package labelindextest

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/labelindex"
)

// NoLabelSelectors is a fake client holding objs, with the label indexes, that fails a list by label selector:
// a stand-in for the manager's cache, which matches a selector against every object of the type.
func NoLabelSelectors(scheme *runtime.Scheme, objs ...client.Object) client.Client {
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...)
	for _, i := range labelindex.Indexes {
		b = b.WithIndex(i.Obj, i.Name(), labelindex.ByLabel(i.Label))
	}
	return interceptor.NewClient(b.Build(), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if o := (&client.ListOptions{}).ApplyOptions(opts); o.LabelSelector != nil {
				return fmt.Errorf("%T listed by label selector %s: the cache would match it against every object", list, o.LabelSelector)
			}
			return c.List(ctx, list, opts...)
		},
	})
}
