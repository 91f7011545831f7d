package processor

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/distfeat/distfeat/schema"
)

// MaxErrorDetail bounds the error-detail header of a dead letter, in bytes.
const MaxErrorDetail = 1024

// maxValuePrefix bounds the prefix of the original value that a truncated dead letter keeps:
// enough to recognise the record in a DLQ viewer; the source headers locate the original.
const maxValuePrefix = 1 << 10

// deadLetter queues the original record for the dead-letter topic with the error headers,
// unless it lies below the replay position (dead-lettered and acknowledged before the last
// commit).
func (p *Processor) deadLetter(rec *Record, err error, replaying bool) {
	if replaying {
		return
	}
	reason := schema.ReasonOf(err)
	detail := err.Error()
	var inv *schema.InvalidError
	if errors.As(err, &inv) {
		detail = inv.Detail
	}
	detail = truncateUTF8(detail, MaxErrorDetail)
	p.obs.OnRecord(ResultInvalid)
	p.obs.OnDeadLetter(rec.Offset, reason, detail)
	own := []Header{
		{Key: schema.HeaderError, Value: []byte(reason)},
		{Key: schema.HeaderErrorDetail, Value: []byte(detail)},
		{Key: schema.HeaderSourceTopic, Value: []byte(rec.Topic)},
		{Key: schema.HeaderSourcePartition, Value: []byte(strconv.Itoa(rec.Partition))},
		{Key: schema.HeaderSourceOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
	}
	key, value, headers := fitDeadLetter(rec.Key, rec.Value, rec.Headers, own, p.cfg.MaxOutputBytes)
	p.slots = append(p.slots, slot{closed: -1, msg: Message{
		Kind: DeadLetter, Key: key, Value: value, Headers: headers, Time: rec.Time,
		FirstOffset: rec.Offset, EventEnd: -1,
	}})
}

// fitDeadLetter returns the dead letter's key, value and headers (the original headers, then
// own) within limit bytes as messageSize counts them. A dead letter that would not fit keeps
// a short prefix of its value and says so (value-truncated, value-bytes); if the key and the
// original headers alone are too large, the original headers are left off (headers-dropped)
// and the key is cut (key-truncated). A dead letter that the output topic refuses would be
// retried forever and stall every record behind it on the partition.
func fitDeadLetter(key, value []byte, orig, own []Header, limit int) ([]byte, []byte, []Header) {
	headers := concatHeaders(orig, own)
	if messageSize(key, value, headers) <= limit {
		return key, value, headers
	}
	headers = concatHeaders(headers, []Header{
		{Key: schema.HeaderValueTruncated, Value: []byte("true")},
		{Key: schema.HeaderValueBytes, Value: []byte(strconv.Itoa(len(value)))},
	})
	if room := limit - messageSize(key, nil, headers); room >= 0 {
		return key, bytes.Clone(value[:min(room, maxValuePrefix, len(value))]), headers
	}
	headers = concatHeaders(headers[len(orig):], []Header{
		{Key: schema.HeaderHeadersDropped, Value: []byte(strconv.Itoa(len(orig)))},
	})
	cut := []Header{{Key: schema.HeaderKeyTruncated, Value: []byte("true")}}
	if room := limit - messageSize(key, nil, concatHeaders(headers, cut)); room < 0 {
		headers = concatHeaders(headers, cut)
		key = bytes.Clone(key[:max(len(key)+room, 0)])
	}
	room := max(limit-messageSize(key, nil, headers), 0)
	return key, bytes.Clone(value[:min(room, maxValuePrefix, len(value))]), headers
}

// messageSize bounds from above the size of a record as kafka-go counts it against the
// writer's BatchBytes (Message.totalSize: 22 bytes of framing, key, value, and each header's
// key and value with varint lengths), counting every varint as its largest, 10 bytes.
func messageSize(key, value []byte, headers []Header) int {
	n := 22 + len(key) + len(value) + 10
	for _, h := range headers {
		n += 20 + len(h.Key) + len(h.Value)
	}
	return n
}

// concatHeaders returns a new slice holding a then b.
func concatHeaders(a, b []Header) []Header {
	out := make([]Header, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// truncateUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
