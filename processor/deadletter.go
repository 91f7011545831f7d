package processor

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/distfeat/distfeat/schema"
)

// MaxErrorDetail bounds the error-detail header of a dead letter, in bytes.
const MaxErrorDetail = 1024

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
	headers := make([]Header, 0, len(rec.Headers)+5)
	headers = append(headers, rec.Headers...)
	headers = append(headers,
		Header{Key: schema.HeaderError, Value: []byte(reason)},
		Header{Key: schema.HeaderErrorDetail, Value: []byte(detail)},
		Header{Key: schema.HeaderSourceTopic, Value: []byte(rec.Topic)},
		Header{Key: schema.HeaderSourcePartition, Value: []byte(strconv.Itoa(rec.Partition))},
		Header{Key: schema.HeaderSourceOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
	)
	p.slots = append(p.slots, slot{closed: -1, msg: Message{
		Kind: DeadLetter, Key: rec.Key, Value: rec.Value, Headers: headers, Time: rec.Time,
		FirstOffset: rec.Offset, EventEnd: -1,
	}})
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
