// Package processor is distfeat's per-partition record processing, without Kafka: it turns
// one partition's input records, in offset order, into feature records and dead letters, and
// says which offset may be committed with which replay checkpoint.
//
// For each record it decodes the value (schema), normalises the points (embedding), assigns
// them to windows (window), finalises and encodes the windows that closed (embedding,
// schema), maps every rejection to a dead-letter reason, builds every output header, and
// suppresses output that a replay below the restored commit re-creates. The caller — the
// Kafka consumer, or a test — only moves records in and out: it writes a partition's
// messages in the order they are returned and commits a CommitPoint once every message
// returned before it was taken is acknowledged.
package processor

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/parallel"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// Config configures a Processor. Zero values take the defaults noted on each field.
type Config struct {
	// Window configures the windows (validated with window.Config.Validate).
	Window window.Config
	// Limits bound the records: an input value over MaxMessageBytes (before decoding) or with
	// more than MaxPointsPerRecord points is dead-lettered as too_large; MaxOutputBytes is the
	// largest output record the caller's writer and the broker accept (the consumer's
	// writer's BatchBytes), dead letters are cut to fit it (schema.HeaderValueTruncated).
	// Zero fields take the documented defaults (config.Limits.SetDefaults); MaxOutputBytes is
	// at least config.MinOutputBytes.
	config.Limits
	// AllowKeyless accepts records without a key whose value names the set. By default
	// they are dead-lettered as no_key: a keyless record lands on whatever partition the
	// producer's partitioner picks, so a set sent without keys is split across partitions
	// and each partition emits its own partial window with the same window-id. Set it only
	// when every set's records reach one partition anyway (a one-partition topic, or a
	// producer that partitions by set itself).
	AllowKeyless bool
	// Group is the consumer group whose close markers this Processor applies; markers of
	// other groups reading the same topic are ignored. "": every marker.
	Group string
	// Points, if set, turns on the per-point output: after each window's feature record,
	// the per-point features of its points (the embedder's marginal_transfer families,
	// computed against the window's own features) as PointFeature messages, each at most
	// MaxOutputBytes. The embedder must retain points (embedding.WithPointRetention); a
	// window whose points did not fit its budget gets no per-point messages
	// (PointObserver.OnPointsDropped).
	Points *schema.PointOutput
	// Models, if set, turns on the predictions: after each window's feature record (and
	// per-point records), its prediction by the model in force (Models.Current; none while
	// that is nil) as a Prediction message. A per-point model in force (model.PerPoint)
	// predicts every point instead: its prediction columns are appended to the per-point
	// records (Points must be set; PointPredictionOutput), and the window has no Prediction.
	Models Models
	// FinalizeWorkers is how many goroutines finalise the windows one Process call closes
	// (embedding.FinalizeBatchParallel) and encode their feature records: the call still
	// returns only when all are done, so commits are unaffected and the bytes never depend
	// on it. Default GOMAXPROCS, so a worker that owns fewer busy partitions than it has
	// cores still uses them all.
	FinalizeWorkers int
	// AddWorkers is how many goroutines add the points of the records one ProcessPrepared
	// call takes to their windows' sketches, a window's points on one goroutine; the window
	// bookkeeping stays serial, and the bytes never depend on it. Default GOMAXPROCS, so that
	// one busy partition uses every core.
	AddWorkers int
}

func (c *Config) setDefaults() {
	c.Limits.SetDefaults()
	if c.FinalizeWorkers <= 0 {
		c.FinalizeWorkers = runtime.GOMAXPROCS(0)
	}
	if c.AddWorkers <= 0 {
		c.AddWorkers = runtime.GOMAXPROCS(0)
	}
}

// ErrOutOfOrder is returned by Process for a record whose offset is not above the last one
// processed: a bug in the caller, never a property of the data.
var ErrOutOfOrder = errors.New("processor: record offsets out of order")

// sketches is the window manager the Processor drives.
type sketches = window.Manager[*windowSketch]

// Processor processes one partition's records. Create one per assigned partition, Restore
// it from the committed metadata, and drop it when the partition is revoked. It is not safe
// for concurrent use.
type Processor struct {
	cfg       Config
	emb       *embedding.Embedder
	out       *schema.Output
	obs       Observer
	hook      embedding.FinalizeHook
	specID    string
	mgr       *sketches
	adds      *deferredAdds // points noted during ProcessPrepared, added at its end
	decodeOpt schema.DecodeOptions
	drift     []embedding.DriftColumn // two_sample families, observed when obs is a DriftObserver
	seq       *Sequential             // sequential detectors (nil: none); their runs hold the commit

	// replayUntil: records below it were processed, and everything they produced was
	// acknowledged, before the last commit; their feature records and dead letters are
	// suppressed.
	replayUntil int64
	next        int64 // next offset to process
	seen        bool  // a record was processed

	pointChunk  int                      // points per PointFeature message (Config.Points)
	predictions *schema.PredictionOutput // the Prediction messages' encoder (Config.Models)
	pointPred   pointPrediction          // the per-point encoder of the last per-point model applied

	normBuf []float64      // normalised points of the current record, reused
	insBuf  []window.Input // window inputs of the current record, reused
	slots   []slot         // output of the current call, in order
	closed  []window.Closed[*windowSketch]
	final   []window.Closed[*embedding.Sketch] // closed, for Finalize, reused
	// rejected lists, per set with an open window, its records dead-lettered since the
	// first record of its earliest open window; closedRejected is what each closed window
	// counts of them (parallel to closed).
	rejected       map[string][]rejection
	closedRejected []rejectCount
}

// rejection is one dead-lettered record of a set: its offset and points (-1: not counted).
type rejection struct{ offset, points int64 }

// maxRejections bounds the rejections kept per open set; beyond it later ones are added to
// the last entry (a window opened after that entry's record then misses them).
const maxRejections = 4096

// rejectCount is what was dead-lettered of one set while one of its windows was open:
// records, and their points unless some record's points could not be counted (uncounted).
type rejectCount struct {
	records, points int64
	uncounted       bool
}

// slot is one output of the current call: a closed window (index into closed) waiting to
// be finalised, or a ready message (closed = -1).
type slot struct {
	closed int
	msg    Message
}

// New returns a Processor for a fresh partition (call Restore to resume from a commit).
// obs may be nil (no measurements); clock supplies processing time for idle timeouts (nil:
// the system clock).
func New(cfg Config, emb *embedding.Embedder, out *schema.Output, obs Observer, clock window.Clock) (*Processor, error) {
	cfg.setDefaults()
	if emb == nil || out == nil {
		return nil, errors.New("processor: embedder and output are required")
	}
	if cfg.MaxOutputBytes < config.MinOutputBytes {
		return nil, fmt.Errorf("processor: MaxOutputBytes %d is below the minimum %d", cfg.MaxOutputBytes, config.MinOutputBytes)
	}
	if obs == nil {
		obs = NopObserver{}
	}
	adds := &deferredAdds{workers: cfg.AddWorkers, minWork: parallelAddMinValues, dim: emb.Dim()}
	newSketch := func() *windowSketch { return &windowSketch{s: emb.NewSketch(), adds: adds} }
	mgr, err := window.NewManager(cfg.Window, newSketch, clock)
	if err != nil {
		return nil, fmt.Errorf("processor: %w", err)
	}
	p := &Processor{
		cfg: cfg, emb: emb, out: out, obs: obs, hook: obs.OnFinalize, specID: emb.Spec().ID(), mgr: mgr, adds: adds,
		decodeOpt: schema.DecodeOptions{Dim: emb.Dim(), MaxPoints: cfg.MaxPointsPerRecord},
		drift:     emb.DriftColumns(),
		rejected:  map[string][]rejection{},
		seq:       NewSequential(emb),
	}
	if cfg.Points != nil {
		if p.pointChunk, err = PointChunk(emb, cfg.Points, cfg.MaxOutputBytes); err != nil {
			return nil, err
		}
	}
	if cfg.Models != nil {
		p.predictions = schema.NewPredictionOutput()
	}
	return p, nil
}

// Restore resumes from a commit: metadata is the committed offset's metadata (Metadata)
// and next the committed offset, where the caller's reading starts. Call it once, before
// the first Process. Metadata that is not distfeat's, or a checkpoint written under another
// spec or window mode, is returned as an error wrapping ErrCheckpointMismatch, and the
// Processor is then fresh from next, without replay suppression: the caller decides whether
// that is acceptable (the consumer refuses to start unless told to reset). v1 metadata
// (no spec recorded) is trusted for the spec.
func (p *Processor) Restore(metadata string, next int64) error {
	if p.seen {
		return errors.New("processor: Restore after Process")
	}
	p.next = next
	meta, err := ParseMetadata(metadata)
	if err != nil {
		_ = p.mgr.Restore("", 0)
		return fmt.Errorf("processor: %w: %w", ErrCheckpointMismatch, err)
	}
	if meta.SpecID != "" && meta.SpecID != p.specID {
		_ = p.mgr.Restore("", 0)
		if old, cur := spec.DefaultSpecV1(), spec.DefaultSpec(); meta.SpecID == old.ID() && p.specID == cur.ID() {
			return fmt.Errorf("processor: %w: %w: the group's checkpoint was written under the former built-in default spec "+
				"(spec_id %s: spec version %d, Gaussian random features, direct mmd) and this worker runs the new built-in default "+
				"(spec_id %s: spec version %d, the same families and parameters with orthogonal random features and mmd's "+
				"non-uniform FFT: other feature values, a lower kernel error, a cheaper window). Either keep the old features: "+
				"set DISTFEAT_SPEC to a file holding the former default, examples/default-spec-v1.json (its spec_id is %s), "+
				"and the group resumes exactly; or move to the new features (models trained on the old ones must be retrained): "+
				"start once with DISTFEAT_RESET_CHECKPOINTS=true (resumes from the committed offsets without replay suppression) "+
				"or use a new DISTFEAT_GROUP. See docs/upgrading.md",
				ErrCheckpointMismatch, ErrDefaultSpecChanged, old.ID(), old.Version, cur.ID(), cur.Version, old.ID())
		}
		return fmt.Errorf("processor: %w: committed under spec_id %s, this worker's spec is %s", ErrCheckpointMismatch, meta.SpecID, p.specID)
	}
	if err := p.mgr.Restore(meta.Window, meta.ReplayUntil); err != nil {
		_ = p.mgr.Restore("", 0)
		return fmt.Errorf("processor: %w: %w", ErrCheckpointMismatch, err)
	}
	p.replayUntil = meta.ReplayUntil
	return nil
}

// Process processes records of this partition in offset order — one, or a fetched batch —
// and returns their output in order; every window closed by them is finalised in one step.
// Bad data never returns an error: it becomes a dead letter. The error (ErrOutOfOrder) is
// for a caller bug only, and then nothing of recs is processed.
func (p *Processor) Process(recs ...Record) (Result, error) {
	last, seen := p.next-1, p.seen
	for i := range recs {
		if seen && recs[i].Offset <= last {
			return Result{}, fmt.Errorf("%w: offset %d after %d", ErrOutOfOrder, recs[i].Offset, last)
		}
		last, seen = recs[i].Offset, true
	}
	for i := range recs {
		p.process(&recs[i], nil)
	}
	return p.finish(), nil
}

// ExpireIdle closes the windows idle for the configured IdleTimeout (processing time, by
// the clock) and returns their feature records. Call it periodically (IdleTimeout/4 is the
// consumer's period).
func (p *Processor) ExpireIdle() Result {
	p.addClosed(p.mgr.Expire(), false)
	return p.finish()
}

// CommitPoint is an offset with the commit metadata that makes a replay from it exact.
type CommitPoint struct {
	Offset   int64
	Metadata string
}

// CommitPoint returns the position to commit once all output returned so far is
// acknowledged: the window manager's safe offset and the checkpoint of this moment, with
// replayUntil = Next (everything closed by records below Next is then delivered).
func (p *Processor) CommitPoint() CommitPoint {
	return CommitPoint{
		Offset:   p.mgr.SafeOffsetHeld(p.next, p.seq.Hold(p.mgr.OldestOpen(p.next))),
		Metadata: Metadata{SpecID: p.specID, ReplayUntil: p.next, Window: p.mgr.Checkpoint()}.String(),
	}
}

// Next is the offset after the last record processed (or the restored offset).
func (p *Processor) Next() int64 { return p.next }

// Replaying reports whether the Processor is still below the restored replay position: the
// last commit stays the right one until it has caught up.
func (p *Processor) Replaying() bool { return p.next < p.replayUntil }

// ReplayUntil is the restored replay position (0 on a fresh start).
func (p *Processor) ReplayUntil() int64 { return p.replayUntil }

// Open is the number of open windows.
func (p *Processor) Open() int { return p.mgr.Open() }

// SizeBytes is the memory held by open windows' sketches. It walks every window: call it
// at metrics-scrape frequency, not per record.
func (p *Processor) SizeBytes() int { return p.mgr.SizeBytes() }

// process handles one input record; pre is its decoding done ahead (Prepare), or nil.
func (p *Processor) process(rec *Record, pre *decoding) {
	p.next, p.seen = rec.Offset+1, true
	replaying := rec.Offset < p.replayUntil
	if rec.isControl() {
		p.control(rec, replaying)
		return
	}
	if replaying {
		p.obs.OnRecord(ResultReplayed)
	}
	var d Decoded
	var err error
	if pre != nil {
		d, err = pre.d, pre.err
	} else {
		d, err = p.decode(rec, p.normBuf)
		if cap(d.Points) > cap(p.normBuf) {
			p.normBuf = d.Points[:0]
		}
	}
	if err != nil {
		p.noteRejected(rec, err, d)
		p.deadLetter(rec, err, replaying)
		return
	}
	if len(rec.Key) == 0 && len(d.Batches) > 0 && !p.cfg.AllowKeyless {
		p.deadLetter(rec, &schema.InvalidError{Reason: schema.ReasonNoKey, Detail: fmt.Sprintf(
			"no record key while the value names set %s: keyless records are spread over partitions and would split the set; key each record by its set ID", strconv.Quote(truncateUTF8(d.Batches[0].Set, 64)))}, replaying)
		return
	}
	if err := p.checkLead(rec, d); err != nil {
		p.noteRejected(rec, err, d)
		p.deadLetter(rec, err, replaying)
		return
	}
	if rejected := p.addToWindows(rec.Offset, d, replaying); rejected != nil {
		p.noteRejected(rec, rejected, d)
		p.deadLetter(rec, rejected, replaying)
		return
	}
	if !replaying {
		p.obs.OnRecord(ResultOK)
		if d.Clipped > 0 {
			p.obs.OnClipped(d.Clipped)
			if co, ok := p.obs.(ClipObserver); ok {
				for i, b := range d.Batches {
					if c := d.BatchClipped[i]; c > 0 {
						co.OnClippedSet(b.Set, b.N, c)
					}
				}
			}
		}
	}
}

// inputs builds the window inputs of one decoded record.
func (p *Processor) inputs(offset int64, d Decoded) []window.Input {
	ins := p.insBuf[:0]
	at, index := 0, 0
	for _, b := range d.Batches {
		ins = append(ins, window.Input{
			Offset: offset, Index: index, Set: b.Set,
			Points: d.Points[at : at+len(b.Points)], Dim: p.emb.Dim(),
			EventTime: b.EventTime, End: b.End,
		})
		at += len(b.Points)
		index += b.N
	}
	p.insBuf = ins
	return ins
}

// addToWindows adds a decoded record's batches to their windows and queues the windows they
// close. It returns the rejection to dead-letter the record with, or nil.
//
// A record is dead-lettered at most once, with every rejected batch in the detail. A record
// with several sets is all in or all out for lateness: if any batch is late, none is applied
// (CheckLate). A batch can still be rejected after earlier ones were applied only when adding
// one evicts (MaxOpen) the set of a later one.
func (p *Processor) addToWindows(offset int64, d Decoded, replaying bool) *schema.InvalidError {
	ins := p.inputs(offset, d)
	if len(ins) > 1 {
		if err := p.mgr.CheckLate(ins); err != nil {
			return &schema.InvalidError{Reason: schema.ReasonLate, Detail: err.Error()}
		}
	}
	var rejected *schema.InvalidError
	reject := func(e *schema.InvalidError) {
		if rejected == nil {
			rejected = e
		} else {
			rejected.Detail += "; " + e.Detail
		}
	}
	for i, in := range ins {
		b := d.Batches[i]
		closed, err := p.mgr.Add(in)
		switch {
		case errors.Is(err, window.ErrLate):
			reject(&schema.InvalidError{Reason: schema.ReasonLate,
				Detail: fmt.Sprintf("batch %d (set %q, t=%d): %v", i, b.Set, b.EventTime, err)})
			continue
		case errors.Is(err, window.ErrEndWithoutWindow):
			if !replaying {
				p.obs.OnEndWithoutWindow()
			}
		case err != nil:
			reject(&schema.InvalidError{Reason: schema.ReasonDecode, Detail: err.Error()})
			continue
		}
		if !replaying {
			p.obs.OnPoints(b.N)
		}
		p.addClosed(closed, replaying)
	}
	return rejected
}

// addClosed queues closed windows for finalisation, or releases them when a record below
// the replay position closed them (emitted and acknowledged before the commit) — unless
// the spec has sequential detectors, whose state such a window moves: it is then finalised
// for them, silently. Each counts its set's records dead-lettered while it was open.
func (p *Processor) addClosed(closed []window.Closed[*windowSketch], replaying bool) {
	for _, c := range closed {
		rc := p.rejectedSince(c.Set, c.FirstOffset)
		if replaying && p.seq == nil {
			p.mgr.Release(c.Sketch)
			continue
		}
		if !replaying {
			p.slots = append(p.slots, slot{closed: len(p.closed)})
		}
		p.closed = append(p.closed, c)
		p.closedRejected = append(p.closedRejected, rc)
	}
}

// noteRejected notes a dead-lettered record of the set its key names, for the
// rejected-records and rejected-points headers of the set's windows open at the time (with
// the points of its batches of that set, if it decoded that far). Late records are not
// counted: their windows were emitted already. Only a set with an open window is noted,
// which bounds the lists by the open windows; a window counts the rejections from its first
// record on, which a replay (starting at or before every open window's first record and
// rebuilding the same windows) notes alike.
func (p *Processor) noteRejected(rec *Record, err error, d Decoded) {
	set := string(rec.Key)
	if set == "" || schema.ReasonOf(err) == schema.ReasonLate {
		return
	}
	if _, open := p.mgr.OpenFrom(set); !open {
		return
	}
	r := rejection{offset: rec.Offset, points: -1}
	if len(d.Batches) > 0 {
		r.points = 0
		for _, b := range d.Batches {
			if b.Set == set {
				r.points += int64(b.N)
			}
		}
	}
	list := p.rejected[set]
	if len(list) == maxRejections {
		last := &list[len(list)-1]
		if last.points < 0 || r.points < 0 {
			last.points = -1
		} else {
			last.points += r.points
		}
		return
	}
	p.rejected[set] = append(list, r)
}

// rejectedSince counts the set's rejections at or after offset first (a window that closed,
// from its first record on), then forgets those no open window of the set can count.
func (p *Processor) rejectedSince(set string, first int64) rejectCount {
	list, ok := p.rejected[set]
	if !ok {
		return rejectCount{}
	}
	var rc rejectCount
	for _, r := range list {
		if r.offset < first {
			continue
		}
		rc.records++
		if r.points < 0 {
			rc.uncounted = true
		} else {
			rc.points += r.points
		}
	}
	from, open := p.mgr.OpenFrom(set)
	if !open {
		delete(p.rejected, set)
		return rc
	}
	keep := list[:0]
	for _, r := range list {
		if r.offset >= from {
			keep = append(keep, r)
		}
	}
	p.rejected[set] = keep
	return rc
}

// finish finalises every window queued by the current call in one step and returns the
// call's output in order.
func (p *Processor) finish() Result {
	if len(p.slots) == 0 && len(p.closed) == 0 {
		return Result{}
	}
	recs := p.finalizeClosed(p.closed)
	for i := range recs { // in the order the windows closed, replayed ones included
		p.seq.Apply(&recs[i], p.closed[i].FirstOffset)
	}
	values, errs := p.encodeAll(recs)
	var applier *model.Applier // one model for every window this call closes
	if p.cfg.Models != nil {
		applier = p.cfg.Models.Current()
	}
	msgs := make([]Message, 0, len(p.slots))
	for _, s := range p.slots {
		if s.closed < 0 {
			msgs = append(msgs, s.msg)
			continue
		}
		c := p.closed[s.closed]
		m, ok := p.featureMessage(c, recs[s.closed], values[s.closed], errs[s.closed], p.closedRejected[s.closed])
		if ok {
			msgs = append(msgs, m)
			perPoint := applier != nil && applier.Model().PredictsPoints()
			if p.cfg.Points != nil {
				var pa *model.Applier // a per-point model predicts in the per-point records
				if perPoint {
					pa = applier
				}
				msgs = p.pointMessages(msgs, c, recs[s.closed], pa)
			}
			if !perPoint {
				msgs = p.predictionMessage(msgs, applier, c, recs[s.closed])
			}
		}
	}
	for _, c := range p.closed {
		p.mgr.Release(c.Sketch)
	}
	clear(p.slots)
	clear(p.closed)
	p.slots, p.closed, p.closedRejected = p.slots[:0], p.closed[:0], p.closedRejected[:0]
	return Result{Messages: msgs}
}

// encodeAll encodes the feature records of the windows one call closed, up to
// Config.FinalizeWorkers at once (each record is encoded on its own, so the bytes do not
// depend on it); the messages are then assembled, and the observer told, in order.
func (p *Processor) encodeAll(recs []schema.FeatureRecord) ([][]byte, []error) {
	values, errs := make([][]byte, len(recs)), make([]error, len(recs))
	parallel.Each(p.cfg.FinalizeWorkers, len(recs), func(i int) {
		values[i], errs[i] = p.out.Encode(recs[i])
	})
	return values, errs
}

// finalizeClosed is where every window the worker emits is finalised: all windows closed by
// one Process or ExpireIdle call together.
func (p *Processor) finalizeClosed(closed []window.Closed[*windowSketch]) []schema.FeatureRecord {
	for _, c := range closed {
		p.final = append(p.final, window.Closed[*embedding.Sketch]{Set: c.Set, Seq: c.Seq, Start: c.Start, End: c.End,
			N: c.N, Sketch: c.Sketch.s, Reason: c.Reason, FirstOffset: c.FirstOffset, LastOffset: c.LastOffset})
	}
	recs := Finalize(p.specID, p.final, p.cfg.FinalizeWorkers, p.hook)
	clear(p.final)
	p.final = p.final[:0]
	return recs
}

// checkLead refuses a record whose event time runs ahead of its timestamp by more than
// Window.MaxLead (reason future), every batch checked before any is applied. A record
// without a timestamp (or at or before the epoch) has nothing to be bounded by.
func (p *Processor) checkLead(rec *Record, d Decoded) *schema.InvalidError {
	lead := p.cfg.Window.MaxLead
	ts := recordTimeMs(rec.Time)
	if lead <= 0 || ts <= 0 {
		return nil
	}
	var bad *schema.InvalidError
	for i, b := range d.Batches {
		if b.EventTime-ts <= lead {
			continue
		}
		detail := fmt.Sprintf("batch %d (set %s): t=%d is %s ahead of the record timestamp %d, more than DISTFEAT_MAX_EVENT_LEAD (%s)",
			i, strconv.Quote(truncateUTF8(b.Set, 64)), b.EventTime, msText(b.EventTime-ts), ts, msText(lead))
		if bad == nil {
			bad = &schema.InvalidError{Reason: schema.ReasonFuture, Detail: detail}
		} else {
			bad.Detail += "; " + detail
		}
	}
	return bad
}

// msText writes a positive span of ms as a duration (10m0s), or in days beyond what a
// time.Duration holds (event times reach the year 9999).
func msText(ms int64) string {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return fmt.Sprintf("%d days", ms/(24*3600*1000))
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// recordTimeMs is a record's Kafka timestamp in ms, the event time of its points when the
// value gives none. A record without a timestamp (the zero Time: Kafka's −1, or a Record
// built without one) counts as 0, so such records still get a deterministic, valid time.
func recordTimeMs(t time.Time) int64 {
	if t.IsZero() || t.UnixMilli() < 0 {
		return 0
	}
	return t.UnixMilli()
}
