package pagedlist

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/pagedlist/pagedlisttest"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/watchlist"
)

// trimData drops a ConfigMap's data, as an informer's transform drops what its cache does not keep.
func trimData(trimmed *atomic.Int64) toolscache.TransformFunc {
	return func(o any) (any, error) {
		cm := o.(*corev1.ConfigMap)
		if cm.Data != nil {
			trimmed.Add(1)
		}
		cm.Data = nil
		return cm, nil
	}
}

func configMap(i int) corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "ns"}, Data: map[string]string{"big": strings.Repeat("x", 100)}}
}

// pagingServer serves a ConfigMapList in pages, as the API server does for a list with a limit and no
// resourceVersion, and records what each list asked for and how many objects were trimmed before it.
type pagingServer struct {
	items   []corev1.ConfigMap
	rv      string
	failAt  int // the page that fails, counted from 1; none when 0
	trimmed *atomic.Int64

	asked          []metav1.ListOptions
	trimmedByAsked []int
}

func (s *pagingServer) list(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.asked, s.trimmedByAsked = append(s.asked, opts), append(s.trimmedByAsked, int(s.trimmed.Load()))
	if len(s.asked) == s.failAt {
		return nil, apierrors.NewResourceExpired("the continue token expired")
	}
	from := 0
	if opts.Continue != "" {
		from, _ = strconv.Atoi(opts.Continue)
	}
	to := len(s.items)
	if opts.Limit > 0 && from+int(opts.Limit) < to {
		to = from + int(opts.Limit)
	}
	page := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
	for _, cm := range s.items[from:to] {
		page.Items = append(page.Items, *cm.DeepCopy())
	}
	if to < len(s.items) {
		page.Continue = strconv.Itoa(to)
	}
	return page, nil
}

func TestPagedList(t *testing.T) {
	five := []corev1.ConfigMap{configMap(0), configMap(1), configMap(2), configMap(3), configMap(4)}
	for _, tc := range []struct {
		name     string
		items    []corev1.ConfigMap
		opts     metav1.ListOptions
		failAt   int
		wantErr  bool
		wantAsks []metav1.ListOptions
		// wantTrimmedBefore is how many objects were trimmed before each list request.
		wantTrimmedBefore []int
		wantNames         []string
	}{
		{
			name:  "the reflector's first list, resourceVersion 0, reads the newest state in pages and trims each page before the next",
			items: five, opts: metav1.ListOptions{ResourceVersion: "0", Limit: 500, LabelSelector: "a=b"},
			wantAsks: []metav1.ListOptions{
				{Limit: 2, LabelSelector: "a=b"}, {Limit: 2, LabelSelector: "a=b", Continue: "2"}, {Limit: 2, LabelSelector: "a=b", Continue: "4"},
			},
			wantTrimmedBefore: []int{0, 2, 4},
			wantNames:         []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"},
		},
		{
			name:  "a relist from a resourceVersion asks for pages not older than it",
			items: five[:3], opts: metav1.ListOptions{ResourceVersion: "41"},
			wantAsks: []metav1.ListOptions{
				{ResourceVersion: "41", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 2}, {Limit: 2, Continue: "2"},
			},
			wantTrimmedBefore: []int{0, 2},
			wantNames:         []string{"cm-0", "cm-1", "cm-2"},
		},
		{
			name: "nothing to list", opts: metav1.ListOptions{ResourceVersion: "0"},
			wantAsks:          []metav1.ListOptions{{Limit: 2}},
			wantTrimmedBefore: []int{0},
		},
		{
			name:  "an exact resourceVersion match is passed on as it is",
			items: five, opts: metav1.ListOptions{ResourceVersion: "41", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantAsks:          []metav1.ListOptions{{ResourceVersion: "41", ResourceVersionMatch: metav1.ResourceVersionMatchExact}},
			wantTrimmedBefore: []int{0},
			wantNames:         []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"},
		},
		{
			name:  "an expired continue token fails the list, for the reflector to list again",
			items: five, opts: metav1.ListOptions{ResourceVersion: "0"}, failAt: 2, wantErr: true,
			wantAsks:          []metav1.ListOptions{{Limit: 2}, {Limit: 2, Continue: "2"}},
			wantTrimmedBefore: []int{0, 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trimmed atomic.Int64
			s := &pagingServer{items: tc.items, rv: "42", failAt: tc.failAt, trimmed: &trimmed}
			lw := toolscache.ToListerWatcherWithContext(Paged(&toolscache.ListWatch{ListWithContextFunc: s.list}, trimData(&trimmed), 2))
			got, err := lw.ListWithContext(context.Background(), tc.opts)
			if !reflect.DeepEqual(s.asked, tc.wantAsks) {
				t.Errorf("asked for %+v, want %+v", s.asked, tc.wantAsks)
			}
			if tc.wantErr {
				if !apierrors.IsResourceExpired(err) {
					t.Fatalf("got %v, want the API server's error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.opts.ResourceVersionMatch == "" && !reflect.DeepEqual(s.trimmedByAsked, tc.wantTrimmedBefore) {
				t.Errorf("objects trimmed before each page: %v, want %v", s.trimmedByAsked, tc.wantTrimmedBefore)
			}
			l := got.(*corev1.ConfigMapList)
			if l.ResourceVersion != "42" || l.Continue != "" {
				t.Errorf("list resourceVersion %q, continue %q; want the pages' 42 and none", l.ResourceVersion, l.Continue)
			}
			var names []string
			for _, cm := range l.Items {
				names = append(names, cm.Name)
				if cm.Data != nil && tc.opts.ResourceVersionMatch == "" {
					t.Errorf("%s was not trimmed", cm.Name)
				}
			}
			if !reflect.DeepEqual(names, tc.wantNames) {
				t.Errorf("listed %v, want %v", names, tc.wantNames)
			}
		})
	}
}

func TestPagedListRefusesATrimThatIsNoObject(t *testing.T) {
	var trimmed atomic.Int64
	s := &pagingServer{items: []corev1.ConfigMap{configMap(0)}, trimmed: &trimmed}
	lw := toolscache.ToListerWatcherWithContext(Paged(&toolscache.ListWatch{ListWithContextFunc: s.list}, func(any) (any, error) { return "not an object", nil }, 2))
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); err == nil {
		t.Fatal("want an error for a transform that returns no API object")
	}
	boom := errors.New("boom")
	lw = toolscache.ToListerWatcherWithContext(Paged(&toolscache.ListWatch{ListWithContextFunc: s.list}, func(any) (any, error) { return nil, boom }, 2))
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the transform's error", err)
	}
}

func TestNewInformerPagesOnlyTheTypesNamed(t *testing.T) {
	l := &pagedlisttest.Lister{List: &corev1.ConfigMapList{}}
	var trimmed atomic.Int64
	newInformer := NewInformer(map[reflect.Type]toolscache.TransformFunc{reflect.TypeOf(&corev1.ConfigMap{}): trimData(&trimmed)}, 7)
	for _, obj := range []runtime.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		pagedlisttest.Sync(t, newInformer(l.ListWatch(), obj, 0, toolscache.Indexers{}))
	}
	if asked := l.Asked(); len(asked) != 2 || asked[0].Limit != 7 || asked[0].ResourceVersion != "" || asked[1].ResourceVersion != "0" {
		t.Fatalf("lists asked %+v; want the ConfigMaps' in pages of 7 from the newest state, the Secrets' as client-go asks", asked)
	}
}

// countLists records the query of every list request of a resource.
type countLists struct {
	rt       http.RoundTripper
	resource string

	mu      sync.Mutex
	queries []url.Values
}

func (c *countLists) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/"+c.resource) && q.Get("watch") != "true" {
		c.mu.Lock()
		c.queries = append(c.queries, q)
		c.mu.Unlock()
	}
	return c.rt.RoundTrip(req)
}

// pages returns the list requests so far and how many asked for a page of limit, and forgets them.
func (c *countLists) pages(limit string) (lists, paging int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.queries {
		if q.Get("limit") == limit {
			paging++
		}
	}
	lists, c.queries = len(c.queries), nil
	return lists, paging
}

// TestPagedListAgainstTheAPIServer: kube-apiserver answers a list of resourceVersion 0 in one response whatever
// the limit (why this package exists), and the paged lists, the first and a relist from a resourceVersion, in
// pages, every object trimmed, even with client-go's streamed lists on for the process.
func TestPagedListAgainstTheAPIServer(t *testing.T) {
	t.Setenv(watchlist.EnvVar, "true") // read by the gate TestMain's watchlist.Off installs
	hub, err := envhub.Start(envhub.Options{CRDPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Stop() })
	admin := kubernetes.NewForConfigOrDie(hub.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const n = 7
	for i := range n {
		cm := configMap(i)
		cm.Labels = map[string]string{"listed": "yes"}
		if _, err := admin.CoreV1().ConfigMaps("ns").Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Any state may be one the watch cache has not caught up from yet: asked again until it shows all n, which a
	// server that kept to the limit of 2 never would.
	any0 := &corev1.ConfigMapList{}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := admin.CoreV1().ConfigMaps("ns").List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 2})
		if err != nil {
			return false, err
		}
		any0 = l
		return len(l.Items) == n, nil
	})
	if err != nil || any0.Continue != "" {
		t.Fatalf("a list of resourceVersion 0 and limit 2: %v, last %d items, continue %q; want all %d in one response", err, len(any0.Items), any0.Continue, n)
	}

	cfg := *hub.Config
	counter := &countLists{resource: "configmaps"}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.rt = rt; return counter })
	rc := kubernetes.NewForConfigOrDie(&cfg).CoreV1().RESTClient()
	var trimmed atomic.Int64
	lw := Paged(toolscache.NewFilteredListWatchFromClient(rc, "configmaps", "ns", func(o *metav1.ListOptions) { o.LabelSelector = "listed=yes" }),
		trimData(&trimmed), 2)
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, toolscache.Indexers{})
	runCtx, stop := context.WithCancel(ctx)
	go inf.RunWithContext(runCtx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	stop()
	if lists, paging := counter.pages("2"); lists != 4 || paging != 4 || trimmed.Load() != n {
		t.Fatalf("the informer's list: %d requests, %d for a page of 2, %d ConfigMaps trimmed; want 4, 4 and %d", lists, paging, trimmed.Load(), n)
	}
	stored := inf.GetStore().List()
	if len(stored) != n {
		t.Fatalf("the informer stores %d ConfigMaps, want %d", len(stored), n)
	}
	for _, o := range stored {
		if o.(*corev1.ConfigMap).Data != nil {
			t.Fatalf("%s stored untrimmed", o.(*corev1.ConfigMap).Name)
		}
	}

	// The relist after a watch fell out of the watch cache: from the last resourceVersion seen, without a limit.
	relisted, err := toolscache.ToListerWatcherWithContext(lw).ListWithContext(ctx, metav1.ListOptions{ResourceVersion: any0.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	if lists, paging := counter.pages("2"); lists != 4 || paging != 4 || len(relisted.(*corev1.ConfigMapList).Items) != n {
		t.Fatalf("the relist: %d requests, %d for a page of 2, %d ConfigMaps; want 4, 4 and %d", lists, paging, len(relisted.(*corev1.ConfigMapList).Items), n)
	}
}

func TestMain(m *testing.M) {
	// As the manager does (cmd/main.go): without it, client-go's reflectors stream their lists and never list.
	watchlist.Off()
	os.Exit(m.Run())
}
