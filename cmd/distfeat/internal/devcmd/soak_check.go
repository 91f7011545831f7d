//go:build dev

package devcmd

// Checking the soak's output: every window received once, byte-identical duplicates.

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
)

// soakCollector receives every feature record and keeps, per distinct (set, window-id), the
// window's n and a hash of its bytes.
type soakCollector struct {
	o    *soakOptions
	rep  *soakReport
	want map[string]int64 // expected set → points
	done chan struct{}

	mu         sync.Mutex
	wins       map[string]soakWindow // set + "\x00" + window-id
	perKey     map[string]*soakKeyAcc
	complete   int
	windows    int
	recvPts    int64
	deliveries int64
	dups       int
	readTo     map[int]int64 // partition → next offset to read
	conflicts  []string
	bad        []string
}

type soakKeyAcc struct {
	n       int64
	windows int
}

func newSoakCollector(o *soakOptions, rep *soakReport) *soakCollector {
	c := &soakCollector{o: o, rep: rep, want: map[string]int64{}, done: make(chan struct{}),
		wins: map[string]soakWindow{}, perKey: map[string]*soakKeyAcc{}, readTo: map[int]int64{}}
	if o.keysMode() {
		for k := 0; k < o.keys; k++ {
			c.want[soakKeyID(k)] = int64(o.keyPoints)
		}
	} else {
		for i := 0; i < o.sets; i++ {
			c.want[synth.SetID(i)] = int64(o.points)
		}
	}
	return c
}

func (c *soakCollector) onRecord(m kafkaio.Record, recs []schema.FeatureRecord, _ []string) bool {
	key := string(m.Key)
	wid := ""
	for _, h := range m.Headers {
		if h.Key == "window-id" {
			wid = string(h.Value)
		}
	}
	sum := sha256.Sum256(m.Value)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliveries++
	c.readTo[m.Partition] = max(c.readTo[m.Partition], m.Offset+1)
	id := key + "\x00" + wid
	if prev, ok := c.wins[id]; ok {
		c.dups++
		if prev.sum != sum {
			c.conflicts = append(c.conflicts, fmt.Sprintf("set %s window %s delivered twice with different bytes", key, wid))
		}
		return true
	}
	if len(recs) != 1 || recs[0].Set != key || strconv.FormatUint(recs[0].Seq, 10) != wid {
		c.bad = append(c.bad, fmt.Sprintf("partition %d offset %d: want one row with set = key %q and seq = window-id %q", m.Partition, m.Offset, key, wid))
		return true
	}
	n := recs[0].N
	c.wins[id] = soakWindow{n: n, sum: sum}
	c.windows++
	c.recvPts += n
	acc := c.perKey[key]
	if acc == nil {
		acc = &soakKeyAcc{}
		c.perKey[key] = acc
	}
	want, expected := c.want[key]
	before := expected && acc.n == want
	acc.n += n
	acc.windows++
	after := expected && acc.n == want
	switch {
	case after && !before:
		c.complete++
		if c.complete == len(c.want) {
			close(c.done)
		}
	case before && !after:
		c.complete--
	}
	return true
}

func (c *soakCollector) onBad(m kafkaio.Record, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliveries++
	c.readTo[m.Partition] = max(c.readTo[m.Partition], m.Offset+1)
	c.bad = append(c.bad, fmt.Sprintf("partition %d offset %d: undecodable feature record: %v", m.Partition, m.Offset, err))
}

// progress returns the distinct windows received and the points they hold.
func (c *soakCollector) progress() (windows int, points int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.windows, c.recvPts
}

func (c *soakCollector) completeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.complete
}

// waitDeliveries waits until n feature records have been read. It gives up when ctx ends or
// when no record arrived for stall: a slow machine only makes it wait longer.
func (c *soakCollector) waitDeliveries(ctx context.Context, n int64, stall time.Duration) error {
	last, moved := int64(-1), time.Now()
	for {
		c.mu.Lock()
		got := c.deliveries
		c.mu.Unlock()
		if got >= n {
			return nil
		}
		if got != last {
			last, moved = got, time.Now()
		}
		if time.Since(moved) > stall || ctx.Err() != nil {
			return fmt.Errorf("read %d of the %d records on the feature topic (none for %s)", got, n, time.Since(moved).Round(time.Second))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check compares what arrived with what was expected and records the failures in the report.
func (c *soakCollector) check() {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, o := c.rep, c.o
	r.windows, r.deliveries, r.duplicates = c.windows, int(c.deliveries), c.dups
	var missing, wrongN, split, unexpected []string
	r.windowsPerKey = [3]int{-1, 0, 0}
	for key, want := range c.want {
		acc := c.perKey[key]
		if acc == nil {
			missing = append(missing, key)
			continue
		}
		if acc.n != want {
			wrongN = append(wrongN, fmt.Sprintf("%s: %d points in %d window(s), produced %d", key, acc.n, acc.windows, want))
		}
		if acc.windows > 1 {
			split = append(split, fmt.Sprintf("%s: %d windows", key, acc.windows))
			r.windowsPerKey[2]++
		}
		if r.windowsPerKey[0] < 0 || acc.windows < r.windowsPerKey[0] {
			r.windowsPerKey[0] = acc.windows
		}
		r.windowsPerKey[1] = max(r.windowsPerKey[1], acc.windows)
	}
	for key := range c.perKey {
		if _, ok := c.want[key]; !ok {
			unexpected = append(unexpected, key)
		}
	}
	some := func(list []string) string {
		slices.Sort(list)
		if len(list) > 5 {
			return strings.Join(list[:5], "; ") + fmt.Sprintf("; … (%d more)", len(list)-5)
		}
		return strings.Join(list, "; ")
	}
	if len(missing) > 0 {
		r.fail("%d sets without any window: %s", len(missing), some(missing))
	}
	if len(wrongN) > 0 {
		r.fail("%d sets whose windows do not hold exactly the produced points: %s", len(wrongN), some(wrongN))
	}
	if len(split) > 0 && !o.keysMode() {
		r.fail("%d sets split into several windows (set mode expects one per set): %s", len(split), some(split))
	}
	if len(unexpected) > 0 {
		r.fail("%d windows for sets never produced: %s", len(unexpected), some(unexpected))
	}
	if len(c.conflicts) > 0 {
		r.fail("%d duplicate deliveries differ from the first: %s", len(c.conflicts), some(c.conflicts))
	}
	if len(c.bad) > 0 {
		r.fail("%d malformed feature records: %s", len(c.bad), some(c.bad))
	}
	if r.deadLetters != 0 {
		r.fail("%d records on the dead-letter topic, want 0", r.deadLetters)
	}
	if o.keysMode() {
		if r.emitted["evicted"] <= 0 {
			r.fail("distfeat_windows_emitted_total{reason=\"evicted\"} is 0: the open-window bound never applied (%d keys, %d per partition)", o.keys, o.maxOpen)
		}
		for _, w := range r.workers {
			if w.hwm > r.bound {
				r.fail("worker %s peak RSS %s exceeds the bound %s", w.name, mib(w.hwm), mib(r.bound))
			}
		}
	}
}
