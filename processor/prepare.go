package processor

import (
	"fmt"

	"github.com/distfeat/distfeat/schema"
)

// Prepared is a record whose value was decoded ahead of processing (Prepare), so that the
// decoding — parsing, normalisation and validation, a pure function of the record — can run
// on another goroutine while the Processor handles earlier records.
type Prepared struct {
	// Record is the record as given to Prepare.
	Record Record
	dec    decoding
}

// decoding is what process needs of a record's decoding: the decoded batches, or the
// error that dead-letters the record (too large, undecodable, not normalisable).
type decoding struct {
	d   Decoded
	err error
}

// Prepare decodes rec's value as Process would — the size limit, schema.DecodeRecord and
// normalisation — and returns it ready for ProcessPrepared. It reads only the Processor's
// configuration, so it is safe to call from any goroutine, concurrently with Process,
// ProcessPrepared and other Prepare calls. A control record (a close marker) is passed
// through undecoded. Bad data is not an error here: ProcessPrepared dead-letters it exactly
// as Process does.
func (p *Processor) Prepare(rec Record) Prepared {
	pr := Prepared{Record: rec}
	if !rec.isControl() {
		pr.dec.d, pr.dec.err = p.decode(&rec, nil)
	}
	return pr
}

// DecodedBytes is the memory a Prepared record holds besides the record itself: its points,
// raw and normalised (the memory budget counts it with the record).
func (pr *Prepared) DecodedBytes() int64 {
	n := 8 * len(pr.dec.d.Points)
	for _, b := range pr.dec.d.Batches {
		n += 8*len(b.Points) + len(b.Set)
	}
	return int64(n)
}

// ProcessPrepared is Process for records prepared ahead (Prepare): same order check, same
// output, dead letters, replay suppression and commit points, byte for byte, as Process of
// the same records.
func (p *Processor) ProcessPrepared(recs ...Prepared) (Result, error) {
	last, seen := p.next-1, p.seen
	for i := range recs {
		if seen && recs[i].Record.Offset <= last {
			return Result{}, fmt.Errorf("%w: offset %d after %d", ErrOutOfOrder, recs[i].Record.Offset, last)
		}
		last, seen = recs[i].Record.Offset, true
	}
	// The prepared records own their points until the call returns: the sketches note them
	// and add them together at the end (deferredAdds), before the windows that closed are
	// finalised.
	p.adds.on = true
	for i := range recs {
		p.process(&recs[i].Record, &recs[i].dec)
	}
	p.adds.run()
	return p.finish(), nil
}

// decode is the decoding half of processing a record: the value size limit, then Decode
// into buf (grown as needed).
func (p *Processor) decode(rec *Record, buf []float64) (Decoded, error) {
	if len(rec.Value) > p.cfg.MaxMessageBytes {
		return Decoded{}, &schema.InvalidError{Reason: schema.ReasonTooLarge,
			Detail: fmt.Sprintf("value is %d bytes, limit %d (DISTFEAT_MAX_MESSAGE_BYTES)", len(rec.Value), p.cfg.MaxMessageBytes)}
	}
	return Decode(p.emb, rec.Key, rec.Value, rec.header(schema.HeaderContentType), recordTimeMs(rec.Time), p.decodeOpt, buf)
}
