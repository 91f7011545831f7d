package window

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Sketch is a window's fixed-size, mergeable state (docs/math.md, Sketches); *embedding.Sketch
// implements it. Merge must be exactly associative and commutative (the embedding package's
// fixed-point accumulators are), because panes are merged in an order that depends on how
// points fell into panes, not on arrival order.
type Sketch[S any] interface {
	Add(u []float64)
	Merge(other S) error
	Count() int64
	Reset()
	SizeBytes() int
}

// Input is one set's points from one input record (one schema.Batch, normalised).
type Input struct {
	Offset    int64     // Kafka offset of the record; non-decreasing from call to call
	Index     int       // ordinal of this batch's first point within the record (Arrow records hold several sets)
	Set       string    // set ID
	Points    []float64 // normalised, row-major, len N·Dim
	Dim       int       // point dimension (may be 0 when Points is empty)
	EventTime int64     // ms since the epoch
	End       bool      // the set's window closes after these points (set, count, session modes)
}

// Closed is a window that closed. Its Sketch belongs to the caller, who should give it back
// with Release once finalised.
type Closed[S any] struct {
	Set         string
	Seq         uint64 // replay-stable window number (package doc, docs/CONTRACTS.md)
	Start, End  int64  // ms: time windows → window bounds [Start, End); set/count → event times of the first and last point (arrival order); session → earliest and latest event time
	N           int64  // points in the window
	Sketch      S
	Reason      Reason
	FirstOffset int64 // offset of the record holding the window's first point
	LastOffset  int64 // offset of the last record that added points to it, or of the input with End that closed it
}

// Errors returned by Manager; match them with errors.Is.
var (
	// ErrLate: the input belongs to an already closed window (time and session modes). Nothing
	// of it was added; the caller dead-letters the record with reason "late".
	ErrLate = errors.New("late data")
	// ErrEndWithoutWindow: an input with End and no points named a set that has no open
	// window (set, count and session modes). It is valid and changes nothing; the caller
	// counts it in a metric and does not dead-letter it.
	ErrEndWithoutWindow = errors.New("end for a set without an open window")
	// ErrInvalidInput: the Input breaks Add's preconditions (offsets going backwards, Points
	// not a multiple of Dim, point ordinals ≥ 2^20). This is a bug in the caller.
	ErrInvalidInput = errors.New("invalid window input")
	// ErrBadCheckpoint: Restore got a checkpoint it cannot use (malformed, another mode, or
	// Restore called after Add). The Manager is left in its fresh state.
	ErrBadCheckpoint = errors.New("bad window checkpoint")
)

// maxIndex bounds point ordinals within a record: Seq keeps them in 20 bits.
const maxIndex = 1 << 20

// noEvent marks "no event time seen yet".
const noEvent = math.MinInt64

// Manager assigns one partition's inputs to windows and closes them. Create one per assigned
// partition with NewManager and drop it when the partition is revoked. It is not safe for
// concurrent use: call it from the partition's goroutine only.
type Manager[S Sketch[S]] struct {
	cfg                  Config
	mode                 Mode
	size, hop, pane, gap int64
	late                 int64
	newSketch            func() S
	clock                Clock
	freeCap              int
	free                 []S
	keys                 map[string]*key[S]
	lruHead, lruTail     *key[S] // head = most recently updated
	open                 int
	out                  []Closed[S]
	now                  time.Time
	haveNow              bool
	started, used        bool
	lastOff              int64
	maxEvent             int64 // largest event time seen (noEvent: none)
	recME                int64 // maxEvent at the start of the current record
	replaying            bool  // the current input is below replayUntil
	replayUntil          int64 // from Restore; math.MinInt64 when not restored
	replayME             int64 // maxEvent of the original run at replayUntil (noEvent: unknown)
	fifo                 fifo[S]
	spans                []span                   // set/count: closed windows' blocked offsets
	timeEnds             iheap[int64]             // time: distinct next-window ends of the sets (lazy)
	timeBuckets          map[int64][]*key[S]      // time: sets by the end of their next window
	sessHeap             iheap[*pane[S]]          // session: sessions by close time
	tombs                map[string]tomb          // time: set → its tombstone (windows ≤ k closed early)
	tombHeap             iheap[tomb]              // time: tombstones by window end, then age (lazy)
	tombFirst            iheap[tomb]              // time: tombstones by the first offset of their windows (lazy; pins the cut)
	tombN                uint64                   // time: tombstones made so far
	maxTombs             int                      // time: tombstones kept exactly (tombsPerOpen × MaxOpen)
	forgot               int64                    // time: highest window number of a forgotten tombstone (noWindow: none)
	cut                  cutState                 // the last SafeOffset result
	hold                 int64                    // the hold of the last SafeOffsetHeld (−1: none)
	sessOrder            func(a, b *pane[S]) bool // heap order of sessions
}

// key is the state of one set.
type key[S Sketch[S]] struct {
	set        string
	prev, next *key[S] // LRU list
	last       time.Time
	lastOff    int64      // offset of the last input that added points (time: or that a replay skipped)
	open       int        // open windows of this set
	panes      []*pane[S] // set: one; count: consecutive pane numbers; time: sorted by pane number; session: sessions sorted by event time
	pos        int64      // count: points in the set's current sequence
	closedEnd  int64      // count: position where the last window closed by count ended
	emitted    int64      // time: highest window number closed (math.MinInt64: none)
	reopenTo   int64      // time: windows ≤ it get reopen ids (the set may have had them closed early; math.MinInt64: none)
	bornOff    int64      // time: offset and point index of the input that created this state (reopen ids)
	bornIdx    int
	requested  int64 // the Manager's last offset when a close marker was last requested (ExpireDue)
	nextEnd    int64 // time: end of the next window to close
	bucketIx   int   // time: index in timeBuckets[nextEnd], -1 when in none
}

// pane is a run of points that stay together in every window: a set window, a count or
// time pane, or a session.
type pane[S Sketch[S]] struct {
	key           *key[S]
	idx           int64 // count/time: pane number
	sk            S
	n             int64
	firstOff      int64
	firstIdx      int
	lastOff       int64
	firstT, lastT int64 // event times of the first and last point (arrival order)
	minT, maxT    int64
	startME       int64 // maxEvent at the start of the record that created the pane
	dead          bool
	heapIx        int // session: index in sessHeap
}

// tomb is a time-mode tombstone: windows ≤ k of set were closed early.
type tomb struct {
	set string
	k   int64
	end int64  // end of window k: the tombstone is dropped once the watermark reaches it
	n   uint64 // creation ordinal: ties of end are forgotten oldest first
	// first is the offset of the earliest record of the windows closed early, and startME the
	// max event time at its start: the cut stays at or below it while the tombstone lives, so
	// a replay reads the records and the close marker again and rebuilds the tombstone.
	first, startME int64
}

// NewManager returns a Manager for cfg (validated with Config.Validate). newSketch makes an
// empty sketch; clock supplies processing time for the idle timeout (nil → SystemClock).
func NewManager[S Sketch[S]](cfg Config, newSketch func() S, clock Clock) (*Manager[S], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if newSketch == nil {
		return nil, errors.New("window: NewManager: newSketch is nil")
	}
	if clock == nil {
		clock = SystemClock{}
	}
	m := &Manager[S]{
		cfg:         cfg,
		mode:        cfg.mode(),
		size:        cfg.Size,
		hop:         cfg.hop(),
		gap:         cfg.Gap,
		late:        cfg.AllowedLateness,
		newSketch:   newSketch,
		clock:       clock,
		freeCap:     min(cfg.MaxOpen, 256),
		keys:        make(map[string]*key[S]),
		maxEvent:    noEvent,
		recME:       noEvent,
		replayUntil: math.MinInt64,
		replayME:    noEvent,
	}
	switch m.mode {
	case ModeSet, ModeSession:
		m.pane = 1
	default:
		m.pane = gcd(m.size, m.hop)
	}
	m.timeEnds = iheap[int64]{less: func(a, b int64) bool { return a < b }}
	m.timeBuckets = make(map[int64][]*key[S])
	m.sessOrder = func(a, b *pane[S]) bool {
		ca, cb := a.maxT+m.gap, b.maxT+m.gap
		if ca != cb {
			return ca < cb
		}
		if a.key.set != b.key.set {
			return a.key.set < b.key.set
		}
		return seqOf(a) < seqOf(b)
	}
	m.sessHeap = iheap[*pane[S]]{less: m.sessOrder, setIx: func(p *pane[S], i int) { p.heapIx = i }}
	m.tombHeap = iheap[tomb]{less: func(a, b tomb) bool { return a.end < b.end || a.end == b.end && a.n < b.n }}
	m.tombFirst = iheap[tomb]{less: func(a, b tomb) bool { return a.first < b.first }}
	m.tombs = make(map[string]tomb)
	m.maxTombs = math.MaxInt
	if cfg.MaxOpen <= math.MaxInt/tombsPerOpen {
		m.maxTombs = tombsPerOpen * cfg.MaxOpen
	}
	m.forgot = noWindow
	return m, nil
}

// Add assigns in's points to windows and returns the windows that closed as a result, in
// closing order: windows evicted to make room, windows completed by the points (count), the
// set's windows closed by End, then windows closed by the watermark advance (time: by end,
// then set; session: by close time, then set). The returned sketches belong to the caller.
//
// Errors (nothing of the input is applied, no windows are returned): ErrLate (time and
// session modes: dead-letter the record), ErrEndWithoutWindow (End without points for a set
// with no open window: count it, do not dead-letter it), ErrInvalidInput (caller bug).
// While replaying below the restored checkpoint's replayUntil, late inputs and ends without a
// window were already reported by the first run, so they return no error.
func (m *Manager[S]) Add(in Input) ([]Closed[S], error) {
	n, err := m.check(in)
	if err != nil {
		return nil, err
	}
	m.begin(in.Offset)
	switch m.mode {
	case ModeSet:
		err = m.addSet(in, n)
	case ModeCount:
		err = m.addCount(in, n)
	case ModeTime:
		err = m.addTime(in, n)
	case ModeSession:
		err = m.addSession(in, n)
	}
	out := m.out
	m.out = nil
	if err != nil && m.replaying && (errors.Is(err, ErrLate) || errors.Is(err, ErrEndWithoutWindow)) {
		err = nil
	}
	return out, err
}

// begin starts processing the record at offset off (its offset is already checked).
func (m *Manager[S]) begin(off int64) {
	if !m.started && m.replayUntil != math.MinInt64 && off < m.cut.c {
		// Replay starts below the checkpoint's cut: its watermark does not apply there.
		m.maxEvent = noEvent
	}
	if !m.started || off != m.lastOff {
		m.recME = m.maxEvent
	}
	m.started, m.used, m.lastOff = true, true, off
	m.replaying = off < m.replayUntil
	m.haveNow = false
	m.out = nil
}

// check validates in and returns its number of points.
func (m *Manager[S]) check(in Input) (int, error) {
	if m.started && in.Offset < m.lastOff {
		return 0, fmt.Errorf("window: %w: offset %d after offset %d", ErrInvalidInput, in.Offset, m.lastOff)
	}
	if in.Index < 0 {
		return 0, fmt.Errorf("window: %w: negative point index %d", ErrInvalidInput, in.Index)
	}
	if len(in.Points) == 0 {
		return 0, nil
	}
	if in.Dim <= 0 || len(in.Points)%in.Dim != 0 {
		return 0, fmt.Errorf("window: %w: %d values are not points of dimension %d", ErrInvalidInput, len(in.Points), in.Dim)
	}
	n := len(in.Points) / in.Dim
	if int64(in.Index)+int64(n) > maxIndex {
		return 0, fmt.Errorf("window: %w: point ordinals %d..%d exceed 2^20", ErrInvalidInput, in.Index, in.Index+n-1)
	}
	return n, nil
}

// Expire closes, with reason "idle", every set whose last points arrived at least
// IdleTimeout ago by the Manager's clock (all of the set's windows, as End would in set,
// count and session modes). It returns nothing when IdleTimeout is 0. Expiry reads the
// processing-time clock, so which windows it closes is not replay-stable.
func (m *Manager[S]) Expire() []Closed[S] {
	if m.cfg.IdleTimeout <= 0 || m.lruTail == nil {
		return nil
	}
	now := m.clock.Now()
	m.out = nil
	m.replaying = false
	for k := m.lruTail; k != nil && now.Sub(k.last) >= m.cfg.IdleTimeout; k = m.lruTail {
		m.closeKey(k, ReasonIdle, -1)
	}
	out := m.out
	m.out = nil
	return out
}

// OpenFrom reports whether set has an open window on this partition and, if so, the lowest
// first offset of its panes (at or below the first offset of each of its open windows).
func (m *Manager[S]) OpenFrom(set string) (int64, bool) {
	k, ok := m.keys[set]
	if !ok || k.open == 0 {
		return 0, false
	}
	first := int64(math.MaxInt64)
	for _, p := range k.panes {
		first = min(first, p.firstOff)
	}
	return first, true
}

// Open returns the number of open windows (windows holding at least one point that have
// not closed). In count mode a set's overlapping sliding windows count separately.
func (m *Manager[S]) Open() int { return m.open }

// SizeBytes returns the summed SizeBytes of the sketches of open windows' panes. It walks
// every pane, so call it at metrics-scrape frequency, not per record.
func (m *Manager[S]) SizeBytes() int {
	total := 0
	for _, k := range m.keys {
		for _, p := range k.panes {
			total += p.sk.SizeBytes()
		}
	}
	return total
}

// Release gives a sketch from a Closed back for reuse: it is Reset and kept on a bounded
// free list that new panes draw from, sparing allocations. Only pass sketches this Manager
// returned (or made with the same newSketch), once, and do not use them afterwards.
func (m *Manager[S]) Release(s S) {
	s.Reset()
	if len(m.free) < m.freeCap {
		m.free = append(m.free, s)
	}
}

// getSketch returns an empty sketch from the free list or newSketch.
func (m *Manager[S]) getSketch() S {
	if n := len(m.free); n > 0 {
		s := m.free[n-1]
		var zero S
		m.free[n-1] = zero
		m.free = m.free[:n-1]
		return s
	}
	return m.newSketch()
}

// merge merges src into dst. Sketches all come from newSketch, so a failure is a bug (a
// foreign sketch handed to Release) and panics.
func (m *Manager[S]) merge(dst, src S) {
	if err := dst.Merge(src); err != nil {
		panic(fmt.Sprintf("window: merging panes: %v (was a foreign sketch passed to Release?)", err))
	}
}

// nowTime returns the processing time of the current call, reading the clock once.
func (m *Manager[S]) nowTime() time.Time {
	if !m.haveNow {
		m.now, m.haveNow = m.clock.Now(), true
	}
	return m.now
}

// watermark returns the partition's watermark and whether any event time has been seen.
func (m *Manager[S]) watermark() (int64, bool) {
	if m.maxEvent == noEvent {
		return 0, false
	}
	return m.maxEvent - m.late, true
}

// advance records event time t as seen.
func (m *Manager[S]) advance(t int64) {
	if t > m.maxEvent {
		m.maxEvent = t
	}
}

// emit appends c to the current result, or releases its sketch when suppress is set (a
// window the first run already emitted, rebuilt partially during replay).
func (m *Manager[S]) emit(c Closed[S], suppress bool) {
	if suppress {
		m.Release(c.Sketch)
		return
	}
	m.out = append(m.out, c)
}

// --- sets and the LRU list ---

// newKey creates the state of in's set, born at in, and makes it the most recently updated.
func (m *Manager[S]) newKey(in Input) *key[S] {
	k := &key[S]{set: in.Set, emitted: math.MinInt64, reopenTo: math.MinInt64, bucketIx: -1,
		bornOff: in.Offset, bornIdx: in.Index, requested: math.MinInt64}
	m.keys[in.Set] = k
	m.lruPushFront(k)
	k.last = m.nowTime()
	return k
}

// touch marks k as updated now.
func (m *Manager[S]) touch(k *key[S], off int64) {
	k.last = m.nowTime()
	k.lastOff = off
	if m.lruHead != k {
		m.lruUnlink(k)
		m.lruPushFront(k)
	}
}

func (m *Manager[S]) lruPushFront(k *key[S]) {
	k.prev, k.next = nil, m.lruHead
	if m.lruHead != nil {
		m.lruHead.prev = k
	}
	m.lruHead = k
	if m.lruTail == nil {
		m.lruTail = k
	}
}

func (m *Manager[S]) lruUnlink(k *key[S]) {
	if k.prev != nil {
		k.prev.next = k.next
	} else {
		m.lruHead = k.next
	}
	if k.next != nil {
		k.next.prev = k.prev
	} else {
		m.lruTail = k.prev
	}
	k.prev, k.next = nil, nil
}

// removeKey forgets k (its panes must have been handed out or killed already).
func (m *Manager[S]) removeKey(k *key[S]) {
	m.lruUnlink(k)
	delete(m.keys, k.set)
	if k.bucketIx >= 0 {
		m.unbucket(k)
	}
	m.open -= k.open
	k.open = 0
	k.panes = nil
}

// makeRoom closes least recently updated sets other than cur until need more windows fit
// within MaxOpen (or no other set is left).
func (m *Manager[S]) makeRoom(cur *key[S], need int) {
	for m.open+need > m.cfg.MaxOpen {
		v := m.lruTail
		if v == cur {
			v = v.prev
		}
		if v == nil {
			return
		}
		m.closeKey(v, ReasonEvicted, -1)
	}
}

// closeKey closes all of k's windows with reason; off is the offset of the input that closes
// them (End), or -1 for idle expiry and eviction.
func (m *Manager[S]) closeKey(k *key[S], reason Reason, off int64) {
	switch m.mode {
	case ModeSet:
		m.closeSet(k, reason, off)
	case ModeCount:
		m.resetCount(k, reason, off)
	case ModeTime:
		m.closeTimeKey(k, reason)
	case ModeSession:
		m.closeSessions(k, reason, off)
	}
}

// --- panes ---

// newPane starts a pane for k holding, first, in's point i0.
func (m *Manager[S]) newPane(k *key[S], in Input, i0 int) *pane[S] {
	p := &pane[S]{
		key:      k,
		sk:       m.getSketch(),
		firstOff: in.Offset,
		firstIdx: in.Index + i0,
		lastOff:  in.Offset,
		firstT:   in.EventTime,
		lastT:    in.EventTime,
		minT:     in.EventTime,
		maxT:     in.EventTime,
		startME:  m.recME,
		heapIx:   -1,
	}
	m.fifo.push(p)
	return p
}

// addPoints adds in's points [i0, i1) to p.
func (m *Manager[S]) addPoints(p *pane[S], in Input, i0, i1 int) {
	p.sk.Add(in.Points[i0*in.Dim : i1*in.Dim])
	p.n += int64(i1 - i0)
	p.lastOff = in.Offset
	p.lastT = in.EventTime
	p.minT = min(p.minT, in.EventTime)
	p.maxT = max(p.maxT, in.EventTime)
}

// killPane retires p; its sketch is released unless it was handed out (handedOut).
func (m *Manager[S]) killPane(p *pane[S], handedOut bool) {
	if !handedOut {
		m.Release(p.sk)
	}
	var zero S
	p.sk = zero
	p.dead = true
	m.fifo.kill()
}

// seqOf returns the Seq of a window whose first point is p's first point.
func seqOf[S Sketch[S]](p *pane[S]) uint64 {
	return uint64(p.firstOff)<<20 | uint64(p.firstIdx)
}

// earlier reports whether a's first point precedes b's.
func earlier[S Sketch[S]](a, b *pane[S]) bool {
	if a.firstOff != b.firstOff {
		return a.firstOff < b.firstOff
	}
	return a.firstIdx < b.firstIdx
}

// fifo holds panes in creation order, which is first-offset order; dead ones are skipped
// lazily and compacted away when they are the majority.
type fifo[S Sketch[S]] struct {
	q          []*pane[S]
	head, dead int
}

func (f *fifo[S]) push(p *pane[S]) { f.q = append(f.q, p) }

// kill notes that one queued pane died, compacting when dead panes dominate.
func (f *fifo[S]) kill() {
	f.dead++
	if live := len(f.q) - f.head - f.dead; f.dead > 64 && f.dead > live {
		j := 0
		for _, p := range f.q[f.head:] {
			if !p.dead {
				f.q[j] = p
				j++
			}
		}
		clear(f.q[j:])
		f.q, f.head, f.dead = f.q[:j], 0, 0
	}
}

// front returns the oldest live pane, or nil.
func (f *fifo[S]) front() *pane[S] {
	for f.head < len(f.q) && f.q[f.head].dead {
		f.q[f.head] = nil
		f.head++
		f.dead--
	}
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
		return nil
	}
	return f.q[f.head]
}

// live calls fn for each live pane in first-offset order.
func (f *fifo[S]) live(fn func(p *pane[S])) {
	for _, p := range f.q[f.head:] {
		if !p.dead {
			fn(p)
		}
	}
}
