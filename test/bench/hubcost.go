package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"
	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/proc"
)

// hubCost is what a row cost the hub: the kube-apiserver and etcd processes every row shares (envtest starts
// them once per run), and the size of the works the row's contender wrote.
type hubCost struct {
	// FanOutAPIServerCPU and FanOutEtcdCPU are kube-apiserver's and etcd's CPU seconds (utime + stime) from
	// just before the fan-out step to just after it (its audit settle included).
	FanOutAPIServerCPU float64 `json:"fanOutAPIServerCPU"`
	FanOutEtcdCPU      float64 `json:"fanOutEtcdCPU"`
	// FanOutSeconds is the time between those two readings.
	FanOutSeconds float64 `json:"fanOutSeconds"`
	// AtRest is the hub's CPU per second with no contender running, measured before the row's size
	// (measureAtRest), so the fan-out's CPU can be told from what the hub spends anyway.
	AtRest hubRates `json:"atRest"`
	// FanOutDBGrowth is the growth of etcd's database in use (etcd_mvcc_db_total_size_in_use_in_bytes) over
	// the fan-out: every revision written in it, the works and any status writes of the job's object.
	FanOutDBGrowth int64 `json:"fanOutDBGrowthBytes"`
	// Works is how many works the byte counts averaged over.
	Works int `json:"works,omitempty"`
	// WorkBytes is the average JSON size of a work as the API server returns it (managedFields included) once
	// fanned out, before any agent reported; WorkBytesWithStatus once the agents reported.
	WorkBytes           float64 `json:"workBytes,omitempty"`
	WorkBytesWithStatus float64 `json:"workBytesWithStatus,omitempty"`
	// Start is the hub just before the fan-out, End at the end of the row.
	Start *hubSample `json:"start,omitempty"`
	End   *hubSample `json:"end,omitempty"`
}

// hubRates are kube-apiserver's and etcd's CPU seconds per second.
type hubRates struct {
	APIServer float64 `json:"apiServer"`
	Etcd      float64 `json:"etcd"`
}

// hubSample is one reading of the hub's processes and etcd's database.
type hubSample struct {
	At        time.Time `json:"at"`
	APIServer procStats `json:"apiServer"`
	Etcd      procStats `json:"etcd"`
	// DBFile is the size of etcd's database file (member/snap/db), DBTotal and DBInUse etcd's
	// etcd_mvcc_db_total_size_in_bytes and etcd_mvcc_db_total_size_in_use_in_bytes.
	DBFile  int64 `json:"dbFileBytes"`
	DBTotal int64 `json:"dbTotalBytes"`
	DBInUse int64 `json:"dbInUseBytes"`
}

// hubProcs are the pids of the hub's kube-apiserver and etcd, found once: envtest does not tell them, but they
// are the harness's children with those names.
var hubProcs struct {
	once            sync.Once
	apiServer, etcd int
}

func findHubProcs() (apiServer, etcd int) {
	hubProcs.once.Do(func() {
		for _, pid := range proc.ChildPIDs() {
			comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if err != nil {
				continue
			}
			switch strings.TrimSpace(string(comm)) {
			case "kube-apiserver":
				hubProcs.apiServer = pid
			case "etcd":
				hubProcs.etcd = pid
			}
		}
		if hubProcs.apiServer == 0 || hubProcs.etcd == 0 {
			logf("hub cost: kube-apiserver (pid %d) or etcd (pid %d) not found among the harness's children", hubProcs.apiServer, hubProcs.etcd)
		}
	})
	return hubProcs.apiServer, hubProcs.etcd
}

// sampleHub reads the hub's processes from /proc and etcd's database size from its data folder and metrics.
// What cannot be read stays zero.
func (b *bench) sampleHub() hubSample {
	s := hubSample{At: time.Now()}
	api, etcd := findHubProcs()
	if api > 0 {
		s.APIServer, _ = readProc(api)
	}
	if etcd > 0 {
		s.Etcd, _ = readProc(etcd)
	}
	e := b.h.env.Env.ControlPlane.Etcd
	if e == nil {
		return s
	}
	if fi, err := os.Stat(filepath.Join(e.DataDir, "member", "snap", "db")); err == nil {
		s.DBFile = fi.Size()
	}
	if e.URL != nil {
		if m, err := scrapeEtcd(e.URL.String() + "/metrics"); err == nil {
			s.DBTotal, s.DBInUse = m.total, m.inUse
		}
	}
	return s
}

// etcdDB are etcd's database sizes from its metrics.
type etcdDB struct{ total, inUse int64 }

func scrapeEtcd(url string) (etcdDB, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return etcdDB{}, err
	}
	defer resp.Body.Close()
	return parseEtcdDB(resp.Body)
}

// parseEtcdDB reads etcd_mvcc_db_total_size_in_bytes and etcd_mvcc_db_total_size_in_use_in_bytes from
// Prometheus text.
func parseEtcdDB(r io.Reader) (etcdDB, error) {
	var m etcdDB
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "etcd_mvcc_db_total_size_in_bytes":
			m.total = int64(v)
		case "etcd_mvcc_db_total_size_in_use_in_bytes":
			m.inUse = int64(v)
		}
	}
	return m, sc.Err()
}

// fanOutCost is the hub's cost of a fan-out between two samples, and the size of the group's works after it.
func (b *bench) fanOutCost(ctx context.Context, before, after hubSample, group string) *hubCost {
	h := &hubCost{
		FanOutAPIServerCPU: after.APIServer.CPU - before.APIServer.CPU,
		FanOutEtcdCPU:      after.Etcd.CPU - before.Etcd.CPU,
		FanOutDBGrowth:     after.DBInUse - before.DBInUse,
		FanOutSeconds:      after.At.Sub(before.At).Seconds(),
		AtRest:             b.atRest,
		Start:              &before,
	}
	if group != "" {
		n, avg, err := b.workBytes(ctx, group)
		if err != nil {
			logf("  bytes per work: %v", err)
		}
		h.Works, h.WorkBytes = n, avg
		logf("  hub in fan-out: kube-apiserver %.2f CPU s, etcd %.2f CPU s, etcd in use %+d bytes; %d works of %.0f bytes", h.FanOutAPIServerCPU, h.FanOutEtcdCPU, h.FanOutDBGrowth, n, avg)
	}
	return h
}

// measureAtRest measures the hub's CPU per second with no contender running (the harness's watches only), for
// the rows that follow: the quietest of one-second windows over d. Right after the fleet grows the API server
// can still be busy for a while (0.2 CPU s/s in one run, against 0.005 at rest), which is not what it spends
// at rest.
func (b *bench) measureAtRest(ctx context.Context, d time.Duration) {
	samples := []hubSample{b.sampleHub()}
	for range max(int(d/time.Second), 1) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		samples = append(samples, b.sampleHub())
	}
	b.atRest = quietest(samples)
	logf("hub at rest: kube-apiserver %.3f CPU s/s, etcd %.3f CPU s/s (the quietest of %d one-second windows)", b.atRest.APIServer, b.atRest.Etcd, len(samples)-1)
}

// quietest is the CPU rates of the window between consecutive samples in which the API server spent the least.
func quietest(samples []hubSample) hubRates {
	var best hubRates
	found := false
	for i := 1; i < len(samples); i++ {
		secs := samples[i].At.Sub(samples[i-1].At).Seconds()
		if secs <= 0 {
			continue
		}
		r := hubRates{
			APIServer: (samples[i].APIServer.CPU - samples[i-1].APIServer.CPU) / secs,
			Etcd:      (samples[i].Etcd.CPU - samples[i-1].Etcd.CPU) / secs,
		}
		if !found || r.APIServer < best.APIServer {
			best, found = r, true
		}
	}
	return best
}

// statusBytes records the group's bytes per work once the agents reported.
func (b *bench) statusBytes(ctx context.Context, h *hubCost, group string) {
	if h == nil {
		return
	}
	_, avg, err := b.workBytes(ctx, group)
	if err != nil {
		logf("  bytes per work with status: %v", err)
		return
	}
	h.WorkBytesWithStatus = avg
}

// endCost samples the hub at the end of a row.
func (b *bench) endCost(r *row) {
	s := b.sampleHub()
	if r.Hub == nil {
		r.Hub = &hubCost{}
	}
	r.Hub.End = &s
}

// groupLabels selects the works of a tracker group ("pmw:", "mwrs:" or "limit:" and the label's value).
func groupLabels(group string) (client.MatchingLabels, error) {
	kind, v, ok := strings.Cut(group, ":")
	if ok {
		switch kind {
		case "pmw":
			return client.MatchingLabels{workv1alpha1.LabelPlacementManifestWork: v}, nil
		case "mwrs":
			return client.MatchingLabels{ocmworkv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: v}, nil
		case "limit":
			return client.MatchingLabels{labelLimit: v}, nil
		}
	}
	return nil, fmt.Errorf("no label selects group %q", group)
}

// workBytes lists the group's works from the API server (500 a page, untyped, so nothing the server returned
// is dropped) and averages their JSON size: the object as the API server stores and serves it.
func (b *bench) workBytes(ctx context.Context, group string) (int, float64, error) {
	sel, err := groupLabels(group)
	if err != nil {
		return 0, 0, err
	}
	var n, total int
	cont := ""
	for {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: workv1.GroupName, Version: workv1.GroupVersion.Version, Kind: "ManifestWorkList"})
		if err := b.h.harness.List(ctx, l, sel, client.Limit(500), client.Continue(cont)); err != nil {
			return n, 0, err
		}
		for _, it := range l.Items {
			raw, err := json.Marshal(it.Object)
			if err != nil {
				return n, 0, err
			}
			n++
			total += len(raw)
		}
		if cont = l.GetContinue(); cont == "" {
			break
		}
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("no work of %s", group)
	}
	return n, float64(total) / float64(n), nil
}

// hubTables renders the hub's cost: per work during fan-out (medians of the runs), and the hub at the end of
// each row (of the first run). Empty when no row measured the hub.
func (r *results) hubTables() string {
	var b strings.Builder
	for _, k := range r.sizes() {
		plain := medianOf(r.runs(limitPlain, k), func(h *hubCost) float64 { return h.WorkBytes })
		for _, name := range r.contenders(k) {
			runs := r.runs(name, k)
			if medianOf(runs, func(h *hubCost) float64 { return h.FanOutAPIServerCPU }) == 0 {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("\nBytes and the hub's cost per work. Bytes are the average JSON size of the row's works as the API server returns them " +
					"(managedFields included), once fanned out and once the agents reported; the rest is over the fan-out step: the growth of etcd's " +
					"database in use (every revision the step wrote, the job's own status writes included) and kube-apiserver's and etcd's CPU " +
					"(utime + stime of /proc/<pid>/stat; the harness's watch and audit log included, as in every row), and the API server's beyond what it " +
					"spends at rest (its CPU per second with no contender running, measured before each size, times the step's length). " +
					"Medians where a row ran several times:\n\n")
				b.WriteString("| row | contender | bytes per work | ×plain | bytes per work, reported | etcd growth per work in fan-out | kube-apiserver CPU s in fan-out | kube-apiserver CPU ms per work | beyond rest | etcd CPU ms per work |\n")
				b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
			}
			works := float64(max(runs[0].Works, 1))
			created := medianOf(runs, func(h *hubCost) float64 { return h.WorkBytes })
			reported := medianOf(runs, func(h *hubCost) float64 { return h.WorkBytesWithStatus })
			growth := medianOf(runs, func(h *hubCost) float64 { return float64(h.FanOutDBGrowth) })
			api := medianOf(runs, func(h *hubCost) float64 { return h.FanOutAPIServerCPU })
			etcd := medianOf(runs, func(h *hubCost) float64 { return h.FanOutEtcdCPU })
			beyond := medianOf(runs, func(h *hubCost) float64 { return h.FanOutAPIServerCPU - h.AtRest.APIServer*h.FanOutSeconds })
			times := "—"
			if created > 0 && plain > 0 {
				times = fmt.Sprintf("%.2f×", created/plain)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f |\n", k.label(), name, bytesOrDash(created), times,
				bytesOrDash(reported), bytesOrDash(growth/works), api, api*1000/works, beyond*1000/works, etcd*1000/works)
		}
	}
	var end strings.Builder
	for _, k := range r.sizes() {
		for _, x := range r.Rows {
			if x.Kind != k.kind || x.N != k.n || x.Run > 1 || x.Hub == nil || x.Hub.End == nil {
				continue
			}
			if end.Len() == 0 {
				end.WriteString("\nThe hub at the end of each row (after its delete; of the first run where a row ran several times). kube-apiserver " +
					"and etcd serve every row of the run, one after the other, so these are the state of the hub after the rows so far: their " +
					"peak RSS (VmHWM) is the peak so far, and etcd keeps deleted works' revisions until the API server compacts them (every 5 min). " +
					"etcd's database: the file member/snap/db and, from its metrics, the part in use; the growth is that of the part in use from " +
					"just before the row's fan-out to its end:\n\n")
				end.WriteString("| row | contender | kube-apiserver RSS MiB | kube-apiserver peak RSS MiB | etcd RSS MiB | etcd peak RSS MiB | etcd db file MiB | etcd db in use MiB | etcd db in use, the row's growth MiB |\n")
				end.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
			}
			e, growth := x.Hub.End, "—"
			if s := x.Hub.Start; s != nil && s.DBInUse > 0 && e.DBInUse > 0 {
				growth = fmt.Sprintf("%.1f", float64(e.DBInUse-s.DBInUse)/(1<<20))
			}
			fmt.Fprintf(&end, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k.label(), x.Contender, mib(e.APIServer.RSS), mib(e.APIServer.HWM),
				mib(e.Etcd.RSS), mib(e.Etcd.HWM), mib1(e.DBFile), mib1(e.DBInUse), growth)
		}
	}
	return b.String() + end.String()
}

// medianOf is the median of f over the runs that measured the hub; 0 when none did.
func medianOf(runs []*row, f func(*hubCost) float64) float64 {
	var xs []float64
	for _, x := range runs {
		if x.Hub != nil {
			xs = append(xs, f(x.Hub))
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return median(xs)
}

func bytesOrDash(v float64) string {
	if v == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", v)
}

// mib1 is bytes in MiB with one decimal; a dash for nothing measured.
func mib1(b int64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", float64(b)/(1<<20))
}
