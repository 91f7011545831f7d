package schema

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// JSON input records are decoded by a small hand-written parser: encoding/json cannot bound
// the number of points before allocating them, reports errors without point indices and is
// several times slower. The parser follows RFC 8259 strictly (no leading zeros, no trailing
// commas, no comments, only the four known fields).

// Field bits for duplicate detection.
const (
	fieldSet = 1 << iota
	fieldPoints
	fieldT
	fieldEnd
)

type jsonDecoder struct {
	b []byte
	i int
}

func decodeJSON(key, value []byte, recordTimeMs int64, o DecodeOptions) (Batch, error) {
	d := jsonDecoder{b: value}
	f := jsonFields{out: Batch{EventTime: recordTimeMs}}
	d.ws()
	if !d.eat('{') {
		if d.i >= len(d.b) {
			return Batch{}, invalid(ReasonDecode, "empty record value")
		}
		return Batch{}, d.syntax("expected a JSON object")
	}
	d.ws()
	if !d.eat('}') {
		for {
			if err := d.field(&f, o); err != nil {
				return Batch{}, err
			}
			d.ws()
			if d.eat(',') {
				continue
			}
			if d.eat('}') {
				break
			}
			return Batch{}, d.syntax("expected ',' or '}'")
		}
	}
	d.ws()
	if d.i != len(d.b) {
		return Batch{}, d.syntax("unexpected data after the JSON object")
	}
	return f.batch(key, o)
}

// jsonFields is a JSON input record under decoding: the fields seen and their values.
type jsonFields struct {
	seen   int
	set    string
	hasSet bool
	hasT   bool // a non-null t: out.EventTime is the record's own, not the Kafka timestamp
	out    Batch
}

// field decodes one `"name": value` member into f.
func (d *jsonDecoder) field(f *jsonFields, o DecodeOptions) error {
	d.ws()
	name, err := d.str()
	if err != nil {
		return d.syntax("expected a field name")
	}
	var bit int
	switch string(name) {
	case "set":
		bit = fieldSet
	case "points":
		bit = fieldPoints
	case "t":
		bit = fieldT
	case "end":
		bit = fieldEnd
	default:
		if o.OtherField == nil {
			return invalid(ReasonDecode, fmt.Sprintf("unknown field %s (want set, points, t, end)", quoteTrunc(string(name))))
		}
		return d.skipOther(string(name), o.OtherField)
	}
	if f.seen&bit != 0 {
		return invalid(ReasonDecode, fmt.Sprintf("duplicate field %q", name))
	}
	f.seen |= bit
	d.ws()
	if !d.eat(':') {
		return d.syntax("expected ':'")
	}
	d.ws()
	if d.null() {
		return nil // null means absent
	}
	return d.fieldValue(bit, f, o)
}

// skipOther skips the value of the field name, which is not one of the record's (see
// DecodeOptions.OtherField), after checking that it is valid JSON, and reports name.
func (d *jsonDecoder) skipOther(name string, report func(string)) error {
	d.ws()
	if !d.eat(':') {
		return d.syntax("expected ':'")
	}
	d.ws()
	dec := json.NewDecoder(bytes.NewReader(d.b[d.i:]))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return d.syntaxf("field %s: %v", quoteTrunc(name), err)
	}
	d.i += int(dec.InputOffset())
	report(name)
	return nil
}

// fieldValue decodes the (non-null) value of the field bit into f.
func (d *jsonDecoder) fieldValue(bit int, f *jsonFields, o DecodeOptions) error {
	switch bit {
	case fieldSet:
		s, err := d.str()
		if err != nil {
			return d.syntaxf("set: %v", err)
		}
		f.set, f.hasSet = string(s), true
	case fieldPoints:
		pts, n, err := d.points(o.Dim, o.MaxPoints)
		if err != nil {
			return err
		}
		if n > 0 {
			f.out.Points, f.out.N = pts, n
		}
	case fieldT:
		t, err := d.millis()
		if err != nil {
			return err
		}
		f.out.EventTime, f.hasT = t, true
	case fieldEnd:
		switch {
		case d.lit("true"):
			f.out.End = true
		case d.lit("false"):
			f.out.End = false
		default:
			return d.syntax("end: expected true, false or null")
		}
	}
	return nil
}

// batch resolves the set ID from the value and the key and returns the decoded batch.
func (f *jsonFields) batch(key []byte, o DecodeOptions) (Batch, error) {
	out := f.out
	if !f.hasT {
		if err := checkRecordTime(out.EventTime); err != nil {
			return Batch{}, err
		}
	}
	switch {
	case f.hasSet:
		if err := checkSet("", f.set, key, o); err != nil {
			return Batch{}, err
		}
		out.Set = f.set
	case len(key) == 0:
		return Batch{}, invalid(ReasonDecode, `no set ID: the record key is empty and the value has no "set" field`)
	default:
		if err := checkSet("record key: ", string(key), nil, o); err != nil {
			return Batch{}, err
		}
		out.Set = string(key)
	}
	return out, nil
}

// syntax returns a decode error at the current offset.
func (d *jsonDecoder) syntax(msg string) error {
	return invalid(ReasonDecode, fmt.Sprintf("%s at offset %d", msg, d.i))
}

func (d *jsonDecoder) syntaxf(format string, args ...any) error {
	return d.syntax(fmt.Sprintf(format, args...))
}

// ws skips JSON whitespace.
func (d *jsonDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// eat consumes c if it is the next byte.
func (d *jsonDecoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// lit consumes the literal s (true, false, null) if it comes next.
func (d *jsonDecoder) lit(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

func (d *jsonDecoder) null() bool { return d.lit("null") }

// str parses a string. The result aliases the input when the string has no escapes.
// Invalid UTF-8 is passed through (callers that keep the string validate it).
func (d *jsonDecoder) str() ([]byte, error) {
	if !d.eat('"') {
		return nil, errNotString
	}
	start := d.i
	for i := start; i < len(d.b); i++ {
		switch c := d.b[i]; {
		case c == '"':
			d.i = i + 1
			return d.b[start:i], nil
		case c == '\\':
			return d.strSlow(start, i)
		case c < 0x20:
			d.i = i
			return nil, errControlChar
		}
	}
	d.i = len(d.b)
	return nil, errUnterminated
}

type jsonSyntaxError string

func (e jsonSyntaxError) Error() string { return string(e) }

const (
	errNotString    = jsonSyntaxError("expected a string")
	errControlChar  = jsonSyntaxError("control character in string")
	errUnterminated = jsonSyntaxError("unterminated string")
	errBadEscape    = jsonSyntaxError("invalid escape in string")
)

// strSlow decodes a string with escapes; i is the offset of the first backslash.
func (d *jsonDecoder) strSlow(start, i int) ([]byte, error) {
	out := make([]byte, 0, i-start+16)
	out = append(out, d.b[start:i]...)
	for i < len(d.b) {
		c := d.b[i]
		switch {
		case c == '"':
			d.i = i + 1
			return out, nil
		case c < 0x20:
			d.i = i
			return nil, errControlChar
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		// Escape.
		if i+1 >= len(d.b) {
			d.i = i
			return nil, errUnterminated
		}
		e := d.b[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(d.b, i)
			if !ok {
				d.i = i
				return nil, errBadEscape
			}
			i += 4
			if utf16.IsSurrogate(r) {
				// A high surrogate must be followed by an escaped low surrogate.
				var r2 rune = -1
				if i+1 < len(d.b) && d.b[i] == '\\' && d.b[i+1] == 'u' {
					r2, ok = hex4(d.b, i+2)
					if !ok {
						r2 = -1
					}
				}
				dec := utf16.DecodeRune(r, r2)
				if dec == utf8.RuneError {
					d.i = i
					return nil, jsonSyntaxError("lone UTF-16 surrogate in \\u escape")
				}
				r = dec
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default:
			d.i = i - 2
			return nil, errBadEscape
		}
	}
	d.i = len(d.b)
	return nil, errUnterminated
}

func hex4(b []byte, i int) (rune, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// millis parses the `t` field: a non-negative JSON integer (ms since the epoch).
func (d *jsonDecoder) millis() (int64, error) {
	start := d.i
	neg := d.eat('-')
	if d.i >= len(d.b) || d.b[d.i] < '0' || d.b[d.i] > '9' {
		return 0, d.syntax("t: expected an integer")
	}
	var v uint64
	overflow := false
	if d.b[d.i] == '0' {
		d.i++
	} else {
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			if v > (math.MaxInt64-9)/10 {
				overflow = true
			}
			v = v*10 + uint64(d.b[d.i]-'0')
			d.i++
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i = start
		return 0, d.syntax("t: must be an integer number of milliseconds")
	}
	switch {
	case overflow:
		return 0, invalid(ReasonDecode, fmt.Sprintf("t: %s out of range: after 9999-12-31T23:59:59.999Z (max %d)", quoteTrunc(string(d.b[start:d.i])), int64(MaxEventTime)))
	case neg && v != 0:
		return 0, invalid(ReasonDecode, fmt.Sprintf("t: negative event time %s", quoteTrunc(string(d.b[start:d.i]))))
	case v > MaxEventTime:
		return 0, invalid(ReasonDecode, fmt.Sprintf("t: %s ms is after 9999-12-31T23:59:59.999Z (max %d)", quoteTrunc(string(d.b[start:d.i])), int64(MaxEventTime)))
	}
	return int64(v), nil
}

// points parses the points array into flat row-major coordinates and returns them with the
// point count. It refuses more than maxPoints points as soon as the next one starts, and
// sizes its buffer from the input length, so hostile input cannot make it allocate more
// than 8·dim·len/(2·dim+1) < 4·len bytes.
func (d *jsonDecoder) points(dim, maxPoints int) ([]float64, int, error) {
	if !d.eat('[') {
		return nil, 0, d.syntax("points: expected an array")
	}
	d.ws()
	if d.eat(']') {
		return nil, 0, nil
	}
	// Every point is at least "[0,…,0]" (2·dim+1 bytes) and has its own '[': both bound the
	// number of points from above, so valid input never reallocates.
	rest := d.b[d.i:]
	capPts := min(bytes.Count(rest, []byte{'['}), len(rest)/(2*dim+1)+1, maxPoints)
	pts := make([]float64, 0, capPts*dim)
	n := 0
	for {
		if n >= maxPoints {
			return nil, 0, invalid(ReasonTooLarge, fmt.Sprintf("more than %d points", maxPoints))
		}
		d.ws()
		if !d.eat('[') {
			return nil, 0, d.syntaxf("points[%d]: expected an array of %d numbers", n, dim)
		}
		k := 0
		d.ws()
		if !d.eat(']') {
			for {
				d.ws()
				start := d.i
				f, ok := d.number()
				if !ok {
					if lit := d.nonFiniteLiteral(); lit != "" {
						return nil, 0, invalid(ReasonNonFinite, fmt.Sprintf("points[%d][%d]: %s is not a finite number", n, k, lit))
					}
					return nil, 0, d.syntaxf("points[%d][%d]: expected a number", n, k)
				}
				if math.IsInf(f, 0) {
					return nil, 0, invalid(ReasonNonFinite, fmt.Sprintf("points[%d][%d]: %s overflows float64",
						n, k, quoteTrunc(string(d.b[start:d.i]))))
				}
				if k < dim {
					pts = append(pts, f)
				}
				k++
				// Fast path: no whitespace around separators.
				if d.i < len(d.b) {
					if c := d.b[d.i]; c == ',' {
						d.i++
						continue
					} else if c == ']' {
						d.i++
						break
					}
				}
				d.ws()
				if d.eat(',') {
					continue
				}
				if d.eat(']') {
					break
				}
				return nil, 0, d.syntaxf("points[%d]: expected ',' or ']'", n)
			}
		}
		if k != dim {
			return nil, 0, invalid(ReasonDim, fmt.Sprintf("points[%d]: got %d coordinates, want %d", n, k, dim))
		}
		n++
		d.ws()
		if d.eat(',') {
			continue
		}
		if d.eat(']') {
			return pts[: n*dim : n*dim], n, nil
		}
		return nil, 0, d.syntax("points: expected ',' or ']'")
	}
}

// nonFiniteLiterals are the spellings of non-finite floats that JSON encoders emit when
// asked to (Python's json, JSON5, Jackson's ALLOW_NON_NUMERIC_NUMBERS): not JSON, but plainly
// a non-finite coordinate rather than a malformed record.
var nonFiniteLiterals = [...]string{"NaN", "Infinity", "-Infinity", "+Infinity", "-NaN"}

// nonFiniteLiteral returns the non-finite literal at d.i, followed by a JSON delimiter, or "".
func (d *jsonDecoder) nonFiniteLiteral() string {
	rest := d.b[d.i:]
	for _, lit := range nonFiniteLiterals {
		if bytes.HasPrefix(rest, []byte(lit)) {
			if len(rest) == len(lit) || bytes.IndexByte([]byte(",] \t\r\n"), rest[len(lit)]) >= 0 {
				return lit
			}
		}
	}
	return ""
}

// pow10 holds the exactly representable powers of ten used by the fast path of number.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number parses a JSON number (RFC 8259 grammar) and returns its value correctly rounded
// to float64 (±Inf when it overflows). ok is false when no valid number starts at d.i.
// It scans the integer part, the fraction and the exponent (numberScan), then converts.
//
// Fast path (Clinger): a mantissa of at most 2^53 scaled by 10^±22 is exact in one float
// operation. Then Eisel–Lemire on the scanned digits (eiselLemire) when no digit was
// dropped; what it cannot decide goes to strconv.ParseFloat, which is exact.
func (d *jsonDecoder) number() (f float64, ok bool) {
	b, start := d.b, d.i
	i := start
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var s numberScan
	if i, ok = s.integer(b, i); !ok {
		return 0, false
	}
	if i, ok = s.fraction(b, i); !ok {
		return 0, false
	}
	if i, ok = s.exponent(b, i); !ok {
		return 0, false
	}
	d.i = i
	if f, ok := s.exact(neg); ok {
		return f, true
	}
	if !s.trunc {
		if f, ok := eiselLemire(s.mant, s.exp10, neg); ok {
			return f, true
		}
	}
	// The bytes were validated above; the only possible error is ErrRange, with f = ±Inf
	// on overflow (underflow rounds to ±0 without error).
	f, _ = strconv.ParseFloat(unsafe.String(&b[start], i-start), 64)
	return f, true
}

// numberScan is what number has read of a JSON number: its first 19 significant digits as
// an integer, the power of ten that scales them, and whether non-zero digits were dropped.
type numberScan struct {
	mant  uint64
	nd    int // significant digits in mant
	exp10 int
	trunc bool
}

// integer reads the integer part at b[i:] (0, or a non-zero digit and more digits) and
// returns the index after it; false if there is none.
func (s *numberScan) integer(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '0':
		return i + 1, true
	case '1' <= c && c <= '9':
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if s.nd < 19 {
				s.mant = s.mant*10 + uint64(b[i]-'0')
				s.nd++
			} else {
				s.exp10++
				s.trunc = s.trunc || b[i] != '0'
			}
		}
		return i, true
	}
	return i, false
}

// fraction reads an optional fraction ('.' and at least one digit) at b[i:]; false if the
// '.' has no digit after it. Leading zeros only lower the exponent.
func (s *numberScan) fraction(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '.' {
		return i, true
	}
	i++
	start := i
	if s.mant == 0 {
		for i < len(b) && b[i] == '0' {
			i++
		}
		s.exp10 -= i - start
	}
	// Up to 19 significant digits go into mant, each lowering the exponent; later ones
	// only set trunc when non-zero.
	mant, j := s.mant, i
	room := 19 - s.nd
	for room-(j-i) >= 8 && len(b)-j >= 8 {
		v, ok := eightDigits(b[j : j+8])
		if !ok {
			break
		}
		mant = mant*100_000_000 + v
		j += 8
	}
	for ; j < len(b) && j-i < room; j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		mant = mant*10 + uint64(c)
	}
	s.mant = mant
	s.nd += j - i
	s.exp10 -= j - i
	for ; j < len(b); j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		s.trunc = s.trunc || c != 0
	}
	return j, j > start
}

// eightDigits returns the value of b[:8] when all eight bytes are ASCII digits (SWAR: the
// digit test and the conversion on one 64-bit word, as in fast_float's
// parse_eight_digits_unrolled).
func eightDigits(b []byte) (uint64, bool) {
	v := binary.LittleEndian.Uint64(b)
	// Each byte is a digit iff its high nibble is 3 and adding 6 does not carry out of the
	// low nibble.
	if v&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 || (v+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 {
		return 0, false
	}
	v -= 0x3030303030303030
	v = v*10 + v>>8 // byte pairs: b[0]·10+b[1] in bytes 1, 3, 5, 7
	v = ((v&0x000000FF000000FF)*(100+(1_000_000<<32)) + (v>>16&0x000000FF000000FF)*(1+(10_000<<32))) >> 32
	return v, true
}

// exponent reads an optional exponent ('e' or 'E', a sign, at least one digit) at b[i:];
// false if it has no digit. Exponents beyond 10⁵ saturate (the value is ±Inf or ±0 anyway).
func (s *numberScan) exponent(b []byte, i int) (int, bool) {
	if i >= len(b) || (b[i] != 'e' && b[i] != 'E') {
		return i, true
	}
	i++
	eneg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		eneg = b[i] == '-'
		i++
	}
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return i, false
	}
	e := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if e < 100000 {
			e = e*10 + int(b[i]-'0')
		}
	}
	if eneg {
		e = -e
	}
	s.exp10 += e
	return i, true
}

// exact is the value when one float operation gives it exactly: zero, or (Clinger) a
// mantissa of at most 2^53 scaled by 10^±22; false otherwise.
func (s *numberScan) exact(neg bool) (float64, bool) {
	if s.mant == 0 && !s.trunc {
		if neg {
			return math.Copysign(0, -1), true
		}
		return 0, true
	}
	if s.trunc || s.mant > 1<<53 || s.exp10 < -22 || s.exp10 > 22 {
		return 0, false
	}
	f := float64(s.mant)
	if s.exp10 < 0 {
		f /= pow10[-s.exp10]
	} else {
		f *= pow10[s.exp10]
	}
	if neg {
		f = -f
	}
	return f, true
}
