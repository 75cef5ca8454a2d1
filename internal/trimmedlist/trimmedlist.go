// Package trimmedlist makes an informer list in one response, as client-go asks for it, and decode that
// response object by object, each trimmed by the informer's transform before the next is decoded.
//
// Why: client-go reads a list response whole and decodes it whole. At 50,000 ManifestWorks with the agents'
// status that is every whole work at once before the transform trims them: a restarted manager peaked at 2.9
// times its steady memory (docs/performance.md, run P). Reading the list in pages instead bounded the memory
// but made a list a hundred requests, and while 50,000 works were rolled out each took 1-12 s: a relist took
// 1.5-3 minutes, longer than the API server's watch cache keeps events, so the watch from the list's
// resourceVersion was too old at once and the informer listed again and again (run T). One response, from the
// watch cache, decoded as it arrives, needs neither.
//
// The informer applies its transform again as it stores the objects, so the transform must be idempotent.
package trimmedlist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
)

// Source is where an informer's objects are listed from and how each is trimmed.
type Source struct {
	// Path is the list's path on the API server, for example /apis/work.open-cluster-management.io/v1/manifestworks:
	// every namespace's, so the cache must not restrict the type to namespaces (it would build an informer per
	// namespace, each listing them all).
	Path string
	// LabelSelector is the informer's (the cache's label selector for the type), empty for every object.
	LabelSelector string
	// Trim is the informer's transform. It must return an API object.
	Trim toolscache.TransformFunc
}

// NewInformer returns a constructor of shared informers for controller-runtime's cache.Options.NewInformer: the
// informers of the types in sources (pointers to API structs) list through cfg as their Source says, decoding
// and trimming object by object; the others, and every watch, as controller-runtime builds them.
func NewInformer(cfg *rest.Config, sources map[reflect.Type]Source) (func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer, error) {
	rc, err := restClient(cfg)
	if err != nil {
		return nil, err
	}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if s, ok := sources[reflect.TypeOf(obj)]; ok {
			lw = ListerWatcher(rc, s, reflect.TypeOf(obj).Elem(), lw)
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}, nil
}

// restClient is the client of the lists: cfg's, reading JSON (custom resources are served as JSON only),
// uncompressed. The API server ends a list after its request timeout (one minute by default) however far it
// got, and gzip of a list of 50,000 works with status (some 370 MB) cost a loaded hub seconds of CPU on the
// way: in run U relists took 27-61 s, two of them cut off at the minute. A manager runs beside its hub, where
// the bytes cost less than the compression.
func restClient(cfg *rest.Config) (rest.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.AcceptContentTypes, c.ContentType = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	c.DisableCompression = true
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("the client of the trimmed lists: %w", err)
	}
	return rc, nil
}

// ListerWatcher lists through rc as s says, into objects of the struct type item, and watches through lw. The
// reflector always lists through it: it tells client-go it cannot stream its list over the watch (a streamed
// list would bypass the trimming), whatever the process's WatchListClient gate says (internal/watchlist).
func ListerWatcher(rc rest.Interface, s Source, item reflect.Type, lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	inner := toolscache.ToListerWatcherWithContext(lw)
	return unstreamed{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return list(ctx, rc, s, item, opts)
		},
		WatchFuncWithContext: inner.WatchWithContext,
	}}
}

// list asks for the state the reflector asks for (any state, "0", at a start; not older than the last one it
// saw, at a relist), which the API server's watch cache serves in one response without waiting to catch up
// with etcd, with s's label selector and without a limit: a limit would only make it pages again.
func list(ctx context.Context, rc rest.Interface, s Source, item reflect.Type, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Limit, opts.Continue, opts.LabelSelector = 0, "", s.LabelSelector
	body, err := rc.Get().AbsPath(s.Path).VersionedParams(&opts, metav1.ParameterCodec).Stream(ctx)
	if err != nil {
		return nil, err // the API server's error as client-go makes it, a 410 Expired among them
	}
	defer func() { _ = body.Close() }()
	return Decode(body, func() any { return reflect.New(item).Interface() }, s.Trim)
}

// Decode reads a JSON list from r object by object: each item is decoded into newItem() and trimmed before the
// next is read, so what lives at once is the trimmed objects and one whole one. The result holds the list's
// metadata and the trimmed objects. (The items are decoded by encoding/json, which matches keys regardless of
// case where apimachinery's decoder does not: the API server writes them exactly.)
func Decode(r io.Reader, newItem func() any, trim toolscache.TransformFunc) (*metav1.List, error) {
	dec := json.NewDecoder(r)
	if err := delim(dec, '{'); err != nil {
		return nil, err
	}
	list := &metav1.List{}
	sawItems := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("reading the list: %w", err)
		}
		switch key {
		case "metadata":
			err = dec.Decode(&list.ListMeta)
		case "items":
			sawItems = true
			list.Items, err = items(dec, newItem, trim)
		default: // kind, apiVersion
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the list's %v: %w", key, err)
		}
	}
	if err := delim(dec, '}'); err != nil {
		return nil, err
	}
	// What the reflector would take for an empty list, or one to page through, is refused: it would drop
	// every cached object, or ask for the whole list again and again.
	switch {
	case !sawItems || list.ResourceVersion == "":
		return nil, errors.New("reading the list: no items or no resourceVersion, not a list")
	case list.Continue != "":
		return nil, errors.New("reading the list: a continue token on a list asked for whole")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("reading the list: more after its end (%v)", err)
	}
	return list, nil
}

// items reads the items array (or null), each object decoded and trimmed before the next is read.
func items(dec *json.Decoder, newItem func() any, trim toolscache.TransformFunc) ([]runtime.RawExtension, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("%v where an array was expected", tok)
	}
	var kept []runtime.RawExtension
	for dec.More() {
		o := newItem()
		if err := dec.Decode(o); err != nil {
			return nil, fmt.Errorf("item %d: %w", len(kept), err)
		}
		t, err := trim(o)
		if err != nil {
			return nil, fmt.Errorf("trimming item %d: %w", len(kept), err)
		}
		obj, ok := t.(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("trimming item %d, a %T, gave a %T, not an API object", len(kept), o, t)
		}
		kept = append(kept, runtime.RawExtension{Object: obj})
	}
	_, err = dec.Token() // the closing ]
	return kept, err
}

func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("reading the list: %w", err)
	}
	if tok != want {
		return fmt.Errorf("reading the list: %v where %v was expected", tok, want)
	}
	return nil
}

// unstreamed is a ListWatch whose list the reflector must not stream over the watch.
type unstreamed struct{ *toolscache.ListWatch }

// IsWatchListSemanticsUnSupported is client-go's opt-out of streamed lists
// (k8s.io/client-go/util/watchlist.DoesClientNotSupportWatchListSemantics).
func (unstreamed) IsWatchListSemanticsUnSupported() bool { return true }
