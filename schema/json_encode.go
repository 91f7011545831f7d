package schema

import (
	"fmt"
	"math"
	"strconv"
)

// EncodeJSON encodes b as a JSON input record value:
// {"set":…,"points":[[…],…],"t":…,"end":…}. The set field is left out when b.Set is empty
// (the record key then names the set). Coordinates are written in the shortest form that
// parses back to the same float64, so DecodeRecord returns b exactly. The point dimension
// is len(b.Points)/b.N. Errors are *InvalidError: a length that is not a multiple of N, a
// non-finite coordinate, invalid UTF-8 in the set ID or a negative event time.
func EncodeJSON(b Batch) ([]byte, error) {
	dim := 0
	if b.N > 0 {
		dim = len(b.Points) / b.N
		if dim == 0 {
			return nil, invalid(ReasonDim, fmt.Sprintf("%d coordinates for %d points", len(b.Points), b.N))
		}
	}
	if err := checkBatch(0, b, dim); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 48+len(b.Set)+len(b.Points)*20)
	buf = append(buf, '{')
	if b.Set != "" {
		buf = append(buf, `"set":`...)
		buf = appendJSONString(buf, b.Set)
		buf = append(buf, ',')
	}
	buf = append(buf, `"points":[`...)
	for i := 0; i < b.N; i++ {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '[')
		for j, v := range b.Points[i*dim : (i+1)*dim] {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSONFloat(buf, v)
		}
		buf = append(buf, ']')
	}
	buf = append(buf, `],"t":`...)
	buf = strconv.AppendInt(buf, b.EventTime, 10)
	buf = append(buf, `,"end":`...)
	buf = strconv.AppendBool(buf, b.End)
	buf = append(buf, '}')
	return buf, nil
}

// appendJSONFloat appends a finite float in the shortest round-tripping form, like
// encoding/json (plain notation for 1e-6 ≤ |v| < 1e21).
func appendJSONFloat(buf []byte, v float64) []byte {
	abs := math.Abs(v)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(buf, v, format, -1, 64)
}

// appendJSONString appends s (valid UTF-8) as a JSON string.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
