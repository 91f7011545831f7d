package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Hardening of Arrow IPC stream reading. The arrow library trusts its input: its message
// reader allocates the metadata length read from the stream before checking it (a hostile
// 8-byte value can ask for 2 GiB), it allocates every buffer length and declared
// decompressed size, and it panics on inconsistent metadata. Hostile input is therefore
// read through
//   - sliceMessageReader, which frames messages directly on the record value, checks every
//     length against the bytes that are really there, rejects compressed bodies,
//     dictionary batches and buffers outside the body, and counts rows against a cap before
//     the library materialises a record batch, and
//   - budgetAllocator, which caps the bytes the library may allocate (defence in depth), and
//   - recover() around everything (the library's own recovers cover most paths).

// Message header types (Arrow format Message.fbs, union MessageHeader).
const (
	fbHeaderSchema      = 1
	fbHeaderRecordBatch = 3
)

// fbTable is a bounds-checked view of one flatbuffers table. Every accessor reports
// malformed input through ok=false instead of panicking.
type fbTable struct {
	b   []byte
	pos int
}

func fbU16(b []byte, p int) (int, bool) {
	if p < 0 || p > len(b)-2 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint16(b[p:])), true
}

func fbU32(b []byte, p int) (int, bool) {
	if p < 0 || p > len(b)-4 {
		return 0, false
	}
	return int(binary.LittleEndian.Uint32(b[p:])), true
}

func fbI64(b []byte, p int) (int64, bool) {
	if p < 0 || p > len(b)-8 {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(b[p:])), true
}

func fbRoot(b []byte) (fbTable, bool) {
	off, ok := fbU32(b, 0)
	if !ok {
		return fbTable{}, false
	}
	t := fbTable{b: b, pos: off}
	_, ok = fbU32(b, off)
	return t, ok
}

// field returns the position of field slot s; present is false for an absent field.
func (t fbTable) field(slot int) (pos int, present, ok bool) {
	so, ok := fbU32(t.b, t.pos)
	if !ok {
		return 0, false, false
	}
	vt := t.pos - int(int32(uint32(so)))
	vtSize, ok := fbU16(t.b, vt)
	if !ok || vtSize < 4 || vt+vtSize > len(t.b) {
		return 0, false, false
	}
	// Same presence rule as the flatbuffers library (a slot is present when its vtable
	// offset is below the vtable size), so both always read the same field.
	vo := 4 + 2*slot
	if vo >= vtSize {
		return 0, false, true
	}
	fo, ok := fbU16(t.b, vt+vo)
	if !ok {
		return 0, false, false
	}
	if fo == 0 {
		return 0, false, true
	}
	return t.pos + fo, true, true
}

func (t fbTable) u8(slot int) (uint8, bool) {
	p, present, ok := t.field(slot)
	if !ok || !present {
		return 0, ok
	}
	if p >= len(t.b) {
		return 0, false
	}
	return t.b[p], true
}

func (t fbTable) i64(slot int) (int64, bool) {
	p, present, ok := t.field(slot)
	if !ok || !present {
		return 0, ok
	}
	return fbI64(t.b, p)
}

// table follows an offset field to a sub-table.
func (t fbTable) table(slot int) (sub fbTable, present, ok bool) {
	p, present, ok := t.field(slot)
	if !ok || !present {
		return fbTable{}, false, ok
	}
	off, ok := fbU32(t.b, p)
	if !ok {
		return fbTable{}, false, false
	}
	sub = fbTable{b: t.b, pos: p + off}
	_, ok = fbU32(t.b, sub.pos)
	return sub, true, ok
}

// vector follows an offset field to a vector of elem-byte elements.
func (t fbTable) vector(slot, elem int) (start, n int, ok bool) {
	p, present, ok := t.field(slot)
	if !ok || !present {
		return 0, 0, ok
	}
	off, ok := fbU32(t.b, p)
	if !ok {
		return 0, 0, false
	}
	n, ok = fbU32(t.b, p+off)
	start = p + off + 4
	if !ok || n > (len(t.b)-start)/elem {
		return 0, 0, false
	}
	return start, n, true
}

// sliceMessageReader implements ipc.MessageReader over a byte slice, validating the framing
// and the parts of the metadata that drive the library's allocations (see above).
type sliceMessageReader struct {
	data    []byte
	pos     int
	msg     *ipc.Message
	maxRows int64 // cap on the rows of all record batches; ≤ 0: none
	// maxFields caps the fields of the schema's expanded field tree.
	maxFields int
	rows      int64
	n         int  // messages read
	eos       bool // an end-of-stream marker (or the end of data) was reached
}

// Retain implements ipc.MessageReader; the reader has a single owner.
func (r *sliceMessageReader) Retain() {}

// Release implements ipc.MessageReader, releasing the current message.
func (r *sliceMessageReader) Release() {
	if r.msg != nil {
		r.msg.Release()
		r.msg = nil
	}
}

func malformed(format string, args ...any) error {
	return invalid(ReasonDecode, "arrow: "+fmt.Sprintf(format, args...))
}

// Message returns the next message, io.EOF at the end of the stream.
func (r *sliceMessageReader) Message() (*ipc.Message, error) {
	r.Release()
	rest := len(r.data) - r.pos
	if rest == 0 {
		r.eos = true
		return nil, io.EOF
	}
	if rest < 4 {
		return nil, malformed("truncated message prefix at offset %d", r.pos)
	}
	cid := binary.LittleEndian.Uint32(r.data[r.pos:])
	var msgLen int
	switch cid {
	case 0: // pre-0.15 end-of-stream
		r.pos += 4
		r.eos = true
		return nil, io.EOF
	case 0xFFFFFFFF:
		if rest < 8 {
			return nil, malformed("truncated message prefix at offset %d", r.pos)
		}
		msgLen = int(int32(binary.LittleEndian.Uint32(r.data[r.pos+4:])))
		r.pos += 8
		if msgLen == 0 {
			r.eos = true
			return nil, io.EOF
		}
	default: // pre-0.15 framing: the length without continuation marker
		msgLen = int(int32(cid))
		r.pos += 4
	}
	if msgLen < 0 || msgLen > len(r.data)-r.pos {
		return nil, malformed("message %d: metadata length %d exceeds the %d bytes left", r.n, msgLen, len(r.data)-r.pos)
	}
	meta := r.data[r.pos : r.pos+msgLen]
	r.pos += msgLen

	root, ok := fbRoot(meta)
	if !ok {
		return nil, malformed("message %d: malformed metadata", r.n)
	}
	htype, ok1 := root.u8(1)
	bodyLen, ok2 := root.i64(3)
	if !ok1 || !ok2 {
		return nil, malformed("message %d: malformed metadata", r.n)
	}
	if bodyLen < 0 || bodyLen > int64(len(r.data)-r.pos) {
		return nil, malformed("message %d: body length %d exceeds the %d bytes left", r.n, bodyLen, len(r.data)-r.pos)
	}
	switch {
	case r.n == 0 && htype != fbHeaderSchema:
		return nil, malformed("stream does not start with a schema message")
	case r.n > 0 && htype != fbHeaderRecordBatch:
		return nil, malformed("message %d: unsupported message type %d (only record batches may follow the schema)", r.n, htype)
	}
	switch htype {
	case fbHeaderSchema:
		if err := checkSchemaMeta(root, len(meta), r.maxFields); err != nil {
			return nil, err
		}
	case fbHeaderRecordBatch:
		if err := r.checkRecordBatch(root, bodyLen); err != nil {
			return nil, err
		}
	}
	body := r.data[r.pos : r.pos+int(bodyLen)]
	r.pos += int(bodyLen)
	r.n++
	r.msg = ipc.NewMessage(memory.NewBufferBytes(meta), memory.NewBufferBytes(body))
	return r.msg, nil
}

func (r *sliceMessageReader) checkRecordBatch(root fbTable, bodyLen int64) error {
	hdr, present, ok := root.table(2)
	if !ok || !present {
		return malformed("message %d: malformed record batch metadata", r.n)
	}
	rows, ok := hdr.i64(0)
	if !ok || rows < 0 {
		return malformed("message %d: malformed record batch length", r.n)
	}
	if r.maxRows > 0 && rows > r.maxRows-r.rows {
		return invalid(ReasonTooLarge, fmt.Sprintf("more than %d points", r.maxRows))
	}
	r.rows += rows
	if _, present, ok := hdr.table(3); !ok || present {
		return malformed("message %d: compressed record batch bodies are not supported", r.n)
	}
	start, n, ok := hdr.vector(2, 16)
	if !ok {
		return malformed("message %d: malformed buffer list", r.n)
	}
	for i := 0; i < n; i++ {
		off, _ := fbI64(hdr.b, start+16*i)
		ln, _ := fbI64(hdr.b, start+16*i+8)
		if off < 0 || ln < 0 || off > bodyLen || ln > bodyLen-off {
			return malformed("message %d: buffer %d [%d, +%d) lies outside the %d-byte body", r.n, i, off, ln, bodyLen)
		}
	}
	return nil
}

// Flatbuffers type ids (Arrow format Schema.fbs, union Type) that distfeat's schemas use.
// The schema check admits only these, so the library never parses anything else.
const (
	fbTypeInt           = 2
	fbTypeFloatingPoint = 3
	fbTypeUtf8          = 5
	fbTypeBool          = 6
	fbTypeList          = 12 // the predictions topic's classes and scores
	fbTypeTimestamp     = 10
	fbTypeFixedSizeList = 16
	fbTypeLargeUtf8     = 20
)

// Limits of the schema check. distfeat's schemas have depth 2: an input schema has at most
// 5 fields (x has a child), an output schema 6 plus 2 per vector column.
const (
	schemaMaxDepth        = 8
	inputSchemaMaxFields  = 64
	outputSchemaMaxFields = 4096
)

// checkSchemaMeta validates a schema message before the library parses it. The library
// expands the field tree recursively without a depth limit and copies every string it
// meets, but flatbuffers offsets may point anywhere, so a small message can describe a
// cyclic tree (unbounded recursion: a fatal stack overflow that recover cannot catch) or a
// DAG that expands exponentially, or reference one large string many times. The check
// walks the tree as the library would, bounding its depth, its node count and the total
// bytes of the strings it references (which for honest metadata cannot exceed the message
// size), and admits only the column types distfeat uses and no dictionary encoding.
func checkSchemaMeta(root fbTable, metaLen, maxFields int) error {
	hdr, present, ok := root.table(2)
	if !ok || !present {
		return malformed("malformed schema message")
	}
	w := schemaWalker{budget: metaLen, maxNodes: maxFields}
	if err := w.keyValues(hdr, 2); err != nil {
		return err
	}
	return w.fields(hdr, 1, 0, "")
}

type schemaWalker struct {
	nodes    int
	maxNodes int
	budget   int // string bytes left
}

// str accounts for the string in field slot of t.
func (w *schemaWalker) str(t fbTable, slot int) (string, error) {
	p, present, ok := t.field(slot)
	if !ok {
		return "", malformed("malformed schema string")
	}
	if !present {
		return "", nil
	}
	off, ok := fbU32(t.b, p)
	if !ok {
		return "", malformed("malformed schema string")
	}
	n, ok := fbU32(t.b, p+off)
	start := p + off + 4
	if !ok || n > len(t.b)-start {
		return "", malformed("malformed schema string")
	}
	if n > w.budget {
		return "", malformed("schema strings exceed the message size")
	}
	w.budget -= n
	return string(t.b[start : start+n]), nil
}

// keyValues accounts for a custom_metadata vector.
func (w *schemaWalker) keyValues(t fbTable, slot int) error {
	start, n, ok := t.vector(slot, 4)
	if !ok {
		return malformed("malformed schema metadata")
	}
	for i := 0; i < n; i++ {
		p := start + 4*i
		off, _ := fbU32(t.b, p)
		kv := fbTable{b: t.b, pos: p + off}
		if _, ok := fbU32(t.b, kv.pos); !ok {
			return malformed("malformed schema metadata")
		}
		if _, err := w.str(kv, 0); err != nil {
			return err
		}
		if _, err := w.str(kv, 1); err != nil {
			return err
		}
	}
	return nil
}

// fields walks a vector of Field tables.
func (w *schemaWalker) fields(t fbTable, slot, depth int, parent string) error {
	if depth > schemaMaxDepth {
		return malformed("schema nested deeper than %d levels", schemaMaxDepth)
	}
	start, n, ok := t.vector(slot, 4)
	if !ok {
		return malformed("malformed schema field list")
	}
	for i := 0; i < n; i++ {
		w.nodes++
		if w.nodes > w.maxNodes {
			return malformed("schema has more than %d fields", w.maxNodes)
		}
		p := start + 4*i
		off, _ := fbU32(t.b, p)
		f := fbTable{b: t.b, pos: p + off}
		if _, ok := fbU32(t.b, f.pos); !ok {
			return malformed("malformed schema field")
		}
		name, err := w.str(f, 0)
		if err != nil {
			return err
		}
		where := fmt.Sprintf("column %s", quoteTrunc(parent+name))
		typ, ok := f.u8(2)
		if !ok {
			return malformed("%s: malformed type", where)
		}
		switch typ {
		case fbTypeInt, fbTypeFloatingPoint, fbTypeUtf8, fbTypeBool, fbTypeList, fbTypeFixedSizeList, fbTypeLargeUtf8:
		case fbTypeTimestamp:
			tt, present, ok := f.table(3)
			if !ok || !present {
				return malformed("%s: malformed timestamp type", where)
			}
			if _, err := w.str(tt, 1); err != nil {
				return err
			}
		default:
			return malformed("%s: unsupported type (flatbuffers type id %d)", where, typ)
		}
		if _, present, ok := f.table(4); !ok || present {
			return malformed("%s: dictionary-encoded columns are not supported", where)
		}
		if err := w.keyValues(f, 6); err != nil {
			return err
		}
		if err := w.fields(f, 5, depth+1, parent+name+"."); err != nil {
			return err
		}
	}
	return nil
}

// errBudget is the panic value of budgetAllocator when its budget is exhausted.
var errBudget = errors.New("arrow: allocation budget exhausted")

// budgetAllocator is a memory.Allocator that hands out at most a fixed number of bytes in
// total (frees are not credited: memory is garbage collected, and a cumulative cap is the
// simpler bound). Past the budget it panics with errBudget; the decoder recovers. It is not
// safe for concurrent use.
type budgetAllocator struct {
	mem      memory.GoAllocator
	left     int
	exceeded bool
}

func newBudgetAllocator(budget int) *budgetAllocator {
	return &budgetAllocator{left: budget}
}

func (a *budgetAllocator) take(size int) {
	if size < 0 || size > a.left {
		a.exceeded = true
		panic(errBudget)
	}
	a.left -= size
}

// Allocate implements memory.Allocator.
func (a *budgetAllocator) Allocate(size int) []byte {
	a.take(size)
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *budgetAllocator) Reallocate(size int, b []byte) []byte {
	a.take(size)
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *budgetAllocator) Free(b []byte) { a.mem.Free(b) }

// readBudget is the allocation budget for reading an IPC stream of n bytes: uncompressed
// buffers are copies of parts of the body, so well-formed streams need about n bytes plus
// per-buffer padding.
func readBudget(n int) int {
	if n > (math.MaxInt-(1<<20))/2 {
		return math.MaxInt
	}
	return 2*n + 1<<20
}

// newSafeReader opens an IPC stream reader over data with the hardening above.
func newSafeReader(data []byte, maxRows int64, maxFields int) (*ipc.Reader, *sliceMessageReader, *budgetAllocator, error) {
	mr := &sliceMessageReader{data: data, maxRows: maxRows, maxFields: maxFields}
	alloc := newBudgetAllocator(readBudget(len(data)))
	rdr, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(alloc))
	if err != nil {
		return nil, nil, nil, streamError(err, alloc)
	}
	return rdr, mr, alloc, nil
}

// streamError converts an error from the arrow reader into an *InvalidError.
func streamError(err error, alloc *budgetAllocator) error {
	var ie *InvalidError
	switch {
	case errors.As(err, &ie):
		return ie
	case alloc != nil && alloc.exceeded:
		return malformed("stream needs more memory than its size allows")
	}
	return invalid(ReasonDecode, "arrow: "+truncDetail(err.Error()))
}

// truncDetail keeps error details header-sized.
func truncDetail(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
