package processor

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/schema"
)

// kafkaGoSize is kafka-go's own count of a record against the writer's BatchBytes
// (Message.totalSize in kafka-go v0.4: 4+1+1 bytes, key and value with 4-byte lengths, an
// 8-byte timestamp, and the headers as a varint-counted array of varint-prefixed strings),
// written out independently of messageSize, which must never be below it.
func kafkaGoSize(key, value []byte, headers []Header) int {
	varint := func(i int) int {
		u := uint64(int64(i)<<1) ^ uint64(int64(i)>>63)
		n := 1
		for ; u >= 0x80; u >>= 7 {
			n++
		}
		return n
	}
	n := 4 + 1 + 1 + 4 + len(key) + 4 + len(value) + 8 + varint(len(headers))
	for _, h := range headers {
		n += varint(len(h.Key)) + len(h.Key) + varint(len(h.Value)) + len(h.Value)
	}
	return n
}

// TestDeadLetterFits: a dead letter never exceeds MaxOutputBytes as kafka-go counts it, so the
// output topic cannot refuse it as too large (which would stall its partition forever); a
// cut value, key or header set is announced in headers, and a dead letter that fits is the
// original record unchanged.
func TestDeadLetterFits(t *testing.T) {
	const limit = 16 << 10
	e := newEnv(t, smallSpec)
	ct := Header{Key: schema.HeaderContentType, Value: []byte("text/csv")}
	manyHeaders := make([]Header, 40)
	for i := range manyHeaders {
		manyHeaders[i] = Header{Key: "h" + strconv.Itoa(i), Value: bytes.Repeat([]byte("v"), 1000)}
	}
	cases := []struct {
		name                         string
		key, value                   []byte
		headers                      []Header
		valueCut, keyCut, hdrDropped bool
	}{
		{"fits", []byte("k"), bytes.Repeat([]byte("x"), 1000), []Header{ct}, false, false, false},
		{"fits just", []byte("k"), bytes.Repeat([]byte("x"), limit-2000), []Header{ct}, false, false, false},
		{"value over the limit", []byte("k"), bytes.Repeat([]byte("x"), limit+5000), []Header{ct}, true, false, false},
		{"value at the limit", []byte("k"), bytes.Repeat([]byte("x"), limit), nil, true, false, false},
		{"huge key", bytes.Repeat([]byte("k"), 3*limit), []byte("{}"), []Header{ct}, true, true, true},
		{"huge headers", []byte("k"), []byte("{"), manyHeaders, true, false, true},
		{"huge key and headers", bytes.Repeat([]byte("k"), limit), []byte("{"), manyHeaders, true, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, c := e.newProc(Config{Limits: config.Limits{MaxOutputBytes: limit, MaxMessageBytes: 4 * limit}}, nil)
			rec := Record{Topic: topic, Partition: 3, Offset: 9, Key: tc.key, Value: tc.value, Headers: tc.headers}
			_, dead := split(processAll(t, p, []Record{rec}, 0))
			if len(dead) != 1 || c.dead != 1 {
				t.Fatalf("%d dead letters, want 1", len(dead))
			}
			m := dead[0]
			if n := kafkaGoSize(m.Key, m.Value, m.Headers); n > limit {
				t.Errorf("dead letter of %d bytes (kafka-go's count), limit %d", n, limit)
			}
			if got := headerOf(m.Headers, schema.HeaderValueTruncated) == "true"; got != tc.valueCut {
				t.Errorf("value-truncated %v, want %v", got, tc.valueCut)
			}
			if tc.valueCut {
				if headerOf(m.Headers, schema.HeaderValueBytes) != strconv.Itoa(len(tc.value)) || !bytes.HasPrefix(tc.value, m.Value) || len(m.Value) > maxValuePrefix {
					t.Errorf("value-bytes %q and %d-byte value: want %d and a prefix of at most %d bytes",
						headerOf(m.Headers, schema.HeaderValueBytes), len(m.Value), len(tc.value), maxValuePrefix)
				}
			} else if !bytes.Equal(m.Value, tc.value) || !bytes.Equal(m.Key, tc.key) || len(m.Headers) != len(tc.headers)+5 {
				t.Error("a dead letter that fits was changed")
			}
			if got := headerOf(m.Headers, schema.HeaderKeyTruncated) == "true"; got != tc.keyCut || !bytes.HasPrefix(tc.key, m.Key) {
				t.Errorf("key-truncated %v (key of %d bytes, a prefix: %v), want %v", got, len(m.Key), bytes.HasPrefix(tc.key, m.Key), tc.keyCut)
			}
			if got := headerOf(m.Headers, schema.HeaderHeadersDropped); (got != "") != tc.hdrDropped || (tc.hdrDropped && got != strconv.Itoa(len(tc.headers))) {
				t.Errorf("headers-dropped %q", got)
			}
			for _, h := range []string{schema.HeaderError, schema.HeaderErrorDetail, schema.HeaderSourceTopic, schema.HeaderSourcePartition, schema.HeaderSourceOffset} {
				if headerOf(m.Headers, h) == "" {
					t.Errorf("header %s missing", h)
				}
			}
			if headerOf(m.Headers, schema.HeaderSourceOffset) != "9" || headerOf(m.Headers, schema.HeaderSourcePartition) != "3" {
				t.Errorf("source headers %v", m.Headers)
			}
		})
	}
}

// TestMessageSizeBound: messageSize is never below kafka-go's count, for header and length
// counts on both sides of every varint width.
func TestMessageSizeBound(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 127, 128, 8191, 8192, 1 << 20} {
		b := bytes.Repeat([]byte("b"), n)
		hs := make([]Header, n%200)
		for i := range hs {
			hs[i] = Header{Key: strings.Repeat("k", n%70), Value: b[:n%300]}
		}
		if got, want := messageSize(b, b, hs), kafkaGoSize(b, b, hs); got < want {
			t.Errorf("n=%d: messageSize %d < kafka-go's %d", n, got, want)
		}
	}
}

// TestTruncateUTF8: error-detail is cut at MaxErrorDetail bytes without splitting a rune.
func TestTruncateUTF8(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{strings.Repeat("é", 10), 5, "éé"},
		{strings.Repeat("é", 10), 4, "éé"},
		{strings.Repeat("x", MaxErrorDetail+1), MaxErrorDetail, strings.Repeat("x", MaxErrorDetail)},
		{"€uro", 2, ""},
	}
	for _, c := range cases {
		if got := truncateUTF8(c.in, c.n); got != c.want {
			t.Errorf("truncateUTF8(%.20q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
