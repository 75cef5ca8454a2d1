package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// request is one finished request of a process under test, from the API server's audit log.
type request struct {
	at                           time.Time
	user, verb, resource, subres string
	code                         int32
}

func (r request) write() bool {
	switch r.verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// auditLog tails the API server's audit log into memory.
type auditLog struct {
	mu       sync.Mutex
	requests []request
	// lastAt is the stage timestamp of the newest event read.
	lastAt time.Time
}

type auditEvent struct {
	Verb           string    `json:"verb"`
	StageTimestamp time.Time `json:"stageTimestamp"`
	User           struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int32 `json:"code"`
	} `json:"responseStatus"`
}

// tail reads path until ctx ends, waiting for the file to appear and grow.
func (a *auditLog) tail(ctx context.Context, path string) {
	var f *os.File
	for f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	defer func() { f.Close() }()
	r := bufio.NewReaderSize(f, 1<<20)
	var partial []byte
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			partial = append(partial, line...)
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			// A rotated log is renamed and a new file takes its name: once the old one is read to the end,
			// continue with the new one.
			if len(partial) == 0 && rotated(f, path) {
				if nf, err := os.Open(path); err == nil {
					f.Close()
					f = nf
					r.Reset(f)
				}
			}
			continue
		}
		if err != nil {
			return
		}
		if len(partial) > 0 {
			line = append(partial, line...)
			partial = nil
		}
		var e auditEvent
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		req := request{at: e.StageTimestamp, user: e.User.Username, verb: e.Verb}
		if e.ObjectRef != nil {
			req.resource, req.subres = e.ObjectRef.Resource, e.ObjectRef.Subresource
		}
		if e.ResponseStatus != nil {
			req.code = e.ResponseStatus.Code
		}
		a.mu.Lock()
		a.requests = append(a.requests, req)
		if req.at.After(a.lastAt) {
			a.lastAt = req.at
		}
		a.mu.Unlock()
	}
}

// caughtUp waits until the tailer has read the events of requests that finished before t: the log is written
// synchronously, so an event of ours stamped after t (a probe request) means everything before it is in.
func (a *auditLog) caughtUp(ctx context.Context, t time.Time, probe func()) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		a.mu.Lock()
		done := !a.lastAt.Before(t)
		a.mu.Unlock()
		if done {
			return
		}
		probe()
		time.Sleep(100 * time.Millisecond)
	}
}

// tally counts requests of a user in [from, to).
type tally struct {
	Requests int            `json:"requests"`
	Writes   int            `json:"writes"`
	ByWrite  map[string]int `json:"byWrite,omitempty"` // "verb resource[/subresource]" -> count
}

func (a *auditLog) count(user string, from, to time.Time) tally {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := tally{ByWrite: map[string]int{}}
	for _, r := range a.requests {
		if r.user != user || r.at.Before(from) || !r.at.Before(to) {
			continue
		}
		t.Requests++
		if r.write() {
			t.Writes++
			k := r.verb + " " + r.resource
			if r.subres != "" {
				k += "/" + r.subres
			}
			t.ByWrite[k]++
		}
	}
	return t
}

// String lists the writes, most frequent first.
func (t tally) String() string {
	keys := make([]string, 0, len(t.ByWrite))
	for k := range t.ByWrite {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return t.ByWrite[keys[i]] > t.ByWrite[keys[j]] })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+itoa(t.ByWrite[k]))
	}
	return strings.Join(parts, ", ")
}

// rotated reports whether path now names another file than f.
func rotated(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && !os.SameFile(a, b)
}
