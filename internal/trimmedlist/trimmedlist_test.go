package trimmedlist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/trimmedlist/trimmedlisttest"
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

func configMap(i int, size int) corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "ns"}, Data: map[string]string{"big": strings.Repeat("x", size)}}
}

func newConfigMap() any { return &corev1.ConfigMap{} }

func names(l *metav1.List) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Object.(*corev1.ConfigMap).Name)
	}
	return out
}

func TestDecode(t *testing.T) {
	cm := func(i int) string {
		raw, _ := json.Marshal(configMap(i, 10))
		return string(raw)
	}
	var trimmed atomic.Int64
	boom := errors.New("boom")
	cases := map[string]struct {
		body      string
		trim      toolscache.TransformFunc
		wantNames []string
		wantRV    string
		wantErr   string
	}{
		"as the API server writes it": {
			body:      `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[` + cm(0) + `,` + cm(1) + `]}`,
			wantNames: []string{"cm-0", "cm-1"}, wantRV: "42",
		},
		"the metadata after the items": {
			body:      `{"items":[` + cm(0) + `],"metadata":{"resourceVersion":"7"}}` + "\n",
			wantNames: []string{"cm-0"}, wantRV: "7",
		},
		"no items":           {body: `{"metadata":{"resourceVersion":"3"},"items":[]}`, wantRV: "3"},
		"no items key":       {body: `{"metadata":{"resourceVersion":"3"}}`, wantErr: "not a list"},
		"a Status":           {body: `{"kind":"Status","apiVersion":"v1","status":"Success"}`, wantErr: "not a list"},
		"no resourceVersion": {body: `{"items":[]}`, wantErr: "not a list"},
		"a continue token":   {body: `{"metadata":{"resourceVersion":"3","continue":"x"},"items":[]}`, wantErr: "continue token"},
		"more after the end": {body: `{"metadata":{"resourceVersion":"3"},"items":[]}{}`, wantErr: "more after its end"},
		"items null":         {body: `{"metadata":{"resourceVersion":"3"},"items":null}`, wantRV: "3"},
		"not an object":      {body: `[1]`, wantErr: "where { was expected"},
		"items no array":     {body: `{"items":{}}`, wantErr: "where an array was expected"},
		"a broken item":      {body: `{"items":[{"metadata":7}]}`, wantErr: "item 0"},
		"cut off":            {body: `{"items":[` + cm(0) + `,`, wantErr: "reading the list"},
		"a trim that fails": {
			body: `{"metadata":{"resourceVersion":"3"},"items":[` + cm(0) + `]}`, trim: func(any) (any, error) { return nil, boom },
			wantErr: "trimming item 0: boom",
		},
		"a trim that gives no object": {
			body: `{"metadata":{"resourceVersion":"3"},"items":[` + cm(0) + `]}`, trim: func(any) (any, error) { return "not an object", nil },
			wantErr: "not an API object",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			trim := tc.trim
			if trim == nil {
				trim = trimData(&trimmed)
			}
			got, err := Decode(strings.NewReader(tc.body), newConfigMap, trim)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(names(got), tc.wantNames) || got.ResourceVersion != tc.wantRV {
				t.Fatalf("items %v, resourceVersion %q; want %v, %q", names(got), got.ResourceVersion, tc.wantNames, tc.wantRV)
			}
			for _, it := range got.Items {
				if it.Object.(*corev1.ConfigMap).Data != nil {
					t.Fatalf("%s kept untrimmed", it.Object.(*corev1.ConfigMap).Name)
				}
			}
		})
	}
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Each object is trimmed while most of the list is still unread: what lives at once is one whole object.
func TestDecodeTrimsEachObjectBeforeReadingTheNext(t *testing.T) {
	l := corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range 200 {
		l.Items = append(l.Items, configMap(i, 10_000))
	}
	raw, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	r := &countingReader{r: strings.NewReader(string(raw))}
	var readAtTrim []int64
	_, err = Decode(r, newConfigMap, func(o any) (any, error) {
		readAtTrim = append(readAtTrim, r.n.Load())
		return o, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := int64(len(raw))
	if len(readAtTrim) != 200 || readAtTrim[0] > total/20 || readAtTrim[99] > total*3/5 {
		t.Fatalf("of %d bytes, %d were read when the first object was trimmed and %d at the 100th; want at most %d and %d",
			total, readAtTrim[0], readAtTrim[min(99, len(readAtTrim)-1)], total/20, total*3/5)
	}
}

// fakeLW answers every list with an empty ConfigMapList and records the lists; its watch sends nothing.
type fakeLW struct{ lists atomic.Int64 }

func (f *fakeLW) lw() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			f.lists.Add(1)
			return &corev1.SecretList{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
}

// listServer answers lists of ConfigMaps with items, or with an error status, and records each query.
type listServer struct {
	items  []corev1.ConfigMap
	status *metav1.Status

	mu      sync.Mutex
	queries []url.Values
}

func (s *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	q := r.URL.Query()
	q.Set("accept-encoding", r.Header.Get("Accept-Encoding")) // recorded beside the query
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/api/v1/configmaps" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if s.status != nil {
		w.WriteHeader(int(s.status.Code))
		_ = json.NewEncoder(w).Encode(s.status)
		return
	}
	_ = json.NewEncoder(w).Encode(corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: s.items})
}

func (s *listServer) asked() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.queries...)
}

func configMaps() Source {
	var trimmed atomic.Int64
	return Source{Path: "/api/v1/configmaps", LabelSelector: "listed=yes", Trim: trimData(&trimmed)}
}

// The informers of the types named list from the API server, as the reflector asks with the source's selector
// and no limit, even with client-go's streamed lists on for the process; the others through their own lister.
func TestNewInformerListsTheTypesNamed(t *testing.T) {
	t.Setenv(watchlist.EnvVar, "true") // read by the gate TestMain's watchlist.Off installs
	srv := &listServer{items: []corev1.ConfigMap{configMap(0, 10), configMap(1, 10)}}
	// TLS, as a hub's: client-go's plain-HTTP transport asks for gzip whatever the config says.
	hs := httptest.NewTLSServer(srv)
	defer hs.Close()
	newInformer, err := NewInformer(&rest.Config{Host: hs.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, map[reflect.Type]Source{reflect.TypeOf(&corev1.ConfigMap{}): configMaps()})
	if err != nil {
		t.Fatal(err)
	}
	cms, secrets := &fakeLW{}, &fakeLW{}
	cmInf := newInformer(cms.lw(), &corev1.ConfigMap{}, 0, toolscache.Indexers{})
	trimmedlisttest.Sync(t, cmInf)
	// The Secrets' informer would stream its list (the gate is on): turned off here to see its lister used.
	t.Setenv(watchlist.EnvVar, "false")
	trimmedlisttest.Sync(t, newInformer(secrets.lw(), &corev1.Secret{}, 0, toolscache.Indexers{}))

	asked := srv.asked()
	if len(asked) != 1 || asked[0].Get("labelSelector") != "listed=yes" || asked[0].Has("limit") || asked[0].Get("resourceVersion") != "0" ||
		asked[0].Get("accept-encoding") != "" {
		t.Fatalf("the ConfigMaps' lists asked %v; want one of resourceVersion 0, the source's selector, no limit and no compression", asked)
	}
	if cms.lists.Load() != 0 || secrets.lists.Load() != 1 {
		t.Fatalf("the informers' own listers listed %d times for ConfigMaps and %d for Secrets; want 0 and 1", cms.lists.Load(), secrets.lists.Load())
	}
	stored := cmInf.GetStore().List()
	if len(stored) != 2 || stored[0].(*corev1.ConfigMap).Data != nil {
		t.Fatalf("stored %d ConfigMaps (want 2, trimmed)", len(stored))
	}
}

// The API server's error reaches the reflector as client-go makes it: a 410 is Expired, so it lists afresh.
func TestListKeepsTheAPIServersError(t *testing.T) {
	srv := &listServer{status: &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version"}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	lw := ListerWatcher(newRESTClient(t, &rest.Config{Host: hs.URL}), configMaps(), reflect.TypeOf(corev1.ConfigMap{}), (&fakeLW{}).lw())
	_, err := toolscache.ToListerWatcherWithContext(lw).ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "5"})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("error %v, want the API server's 410 Expired", err)
	}
	if q := srv.asked(); len(q) != 1 || q[0].Get("resourceVersion") != "5" {
		t.Fatalf("asked %v; want one list of resourceVersion 5", q)
	}
}

func newRESTClient(t *testing.T, cfg *rest.Config) rest.Interface {
	t.Helper()
	rc, err := restClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// countLists records the query of every list request of a resource, through each transport it wraps.
type countLists struct {
	resource string

	mu      sync.Mutex
	queries []url.Values
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (c *countLists) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/"+c.resource) && q.Get("watch") != "true" {
			c.mu.Lock()
			c.queries = append(c.queries, q)
			c.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

// take returns the list requests so far and forgets them.
func (c *countLists) take() []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queries
	c.queries = nil
	return q
}

// TestListAgainstTheAPIServer: the informer's first list and a relist from a resourceVersion are each one
// request, as the reflector asks with the informer's selector and no limit, every object trimmed, even with
// client-go's streamed lists on for the process.
func TestListAgainstTheAPIServer(t *testing.T) {
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
	for i := range n + 1 {
		cm := configMap(i, 100)
		if i < n {
			cm.Labels = map[string]string{"listed": "yes"}
		}
		if _, err := admin.CoreV1().ConfigMaps("ns").Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	cfg := *hub.Config
	counter := &countLists{resource: "configmaps"}
	cfg.Wrap(counter.wrap)
	var trimmed atomic.Int64
	src := Source{Path: "/api/v1/configmaps", LabelSelector: "listed=yes", Trim: trimData(&trimmed)}
	newInformer, err := NewInformer(&cfg, map[reflect.Type]Source{reflect.TypeOf(&corev1.ConfigMap{}): src})
	if err != nil {
		t.Fatal(err)
	}
	rc := kubernetes.NewForConfigOrDie(&cfg).CoreV1().RESTClient()
	watchOnly := toolscache.NewFilteredListWatchFromClient(rc, "configmaps", metav1.NamespaceAll, func(o *metav1.ListOptions) { o.LabelSelector = "listed=yes" })
	inf := newInformer(watchOnly, &corev1.ConfigMap{}, 0, toolscache.Indexers{})
	// The watch cache may answer resourceVersion 0 from a state before the last creates: the informer lists
	// again until it stores all n (its watch would bring them too, so only the stored objects are checked).
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go inf.RunWithContext(runCtx)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return inf.HasSynced() && len(inf.GetStore().List()) == n, nil
	}); err != nil {
		t.Fatalf("the informer stores %d ConfigMaps, want %d: %v", len(inf.GetStore().List()), n, err)
	}
	stop()
	first := counter.take()
	if len(first) != 1 || first[0].Has("limit") || first[0].Get("resourceVersion") != "0" || first[0].Get("labelSelector") != "listed=yes" {
		t.Fatalf("the informer's list asked %v; want one request of resourceVersion 0, the selector and no limit", first)
	}
	for _, o := range inf.GetStore().List() {
		if o.(*corev1.ConfigMap).Data != nil {
			t.Fatalf("%s stored untrimmed", o.(*corev1.ConfigMap).Name)
		}
	}

	// The relist after a watch fell out of the watch cache: from the last resourceVersion seen.
	rv := inf.LastSyncResourceVersion()
	relisted, err := toolscache.ToListerWatcherWithContext(ListerWatcher(newRESTClient(t, &cfg), src, reflect.TypeOf(corev1.ConfigMap{}), watchOnly)).
		ListWithContext(ctx, metav1.ListOptions{ResourceVersion: rv, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	again := counter.take()
	if len(again) != 1 || again[0].Has("limit") || again[0].Get("resourceVersion") != rv || len(relisted.(*metav1.List).Items) != n {
		t.Fatalf("the relist asked %v and got %d ConfigMaps; want one request of resourceVersion %s and no limit, and %d", again, len(relisted.(*metav1.List).Items), rv, n)
	}
}

func TestMain(m *testing.M) {
	// As the manager does (cmd/main.go): the tests that want streamed lists on say so (watchlist.EnvVar).
	watchlist.Off()
	os.Exit(m.Run())
}
