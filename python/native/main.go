// Command native is the shared library of the Python package distfeat (built with
// `go build -buildmode=c-shared` by python/setup.py, loaded with ctypes): a thin C ABI over
// the packages the worker runs — spec, embedding (through offline), calibrate, model. Results
// that are documents (a resolved spec, a calibration) come back as JSON strings; numeric
// inputs and outputs are caller-owned buffers (float64 points with int64 set offsets,
// float32 features) that Go reads and writes in place and never keeps. Every function that
// can fail returns NULL on success or an error message; strings returned are freed with
// distfeat_free. A compiled spec is a handle (runtime/cgo.Handle) released with
// distfeat_close.
//
// The library starts a Go runtime in the process: fork() after loading it is unsafe (the
// child has one thread and the runtime's locks in unknown states); docs/python.md.
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/buildinfo"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

func main() {}

// column describes one output vector for the Python side.
type column struct {
	Name   string `json:"name"`
	Family string `json:"family"`
	Len    int    `json:"len"`
	Kind   string `json:"kind"`
}

// compiled is what distfeat_new returns besides the handle.
type compiled struct {
	Handle    uintptr         `json:"handle"`
	Spec      json.RawMessage `json:"spec"`
	SpecID    string          `json:"spec_id"`
	Dim       int             `json:"dim"`
	Width     int             `json:"width"`
	Columns   []column        `json:"columns"`
	PointMaps []column        `json:"point_maps"`
	Drift     []driftColumn   `json:"drift"`
}

type driftColumn struct {
	Column int     `json:"column"`
	Family string  `json:"family"`
	Alpha  float64 `json:"alpha"`
}

// cString returns a C copy of s (freed by distfeat_free).
func cString(s string) *C.char { return C.CString(s) }

// cError is nil for a nil error, else its message as a C string.
func cError(err error) *C.char {
	if err == nil {
		return nil
	}
	return cString(err.Error())
}

// guard turns a panic into an error message: a Go panic must not unwind into Python.
func guard(res **C.char) {
	if r := recover(); r != nil {
		*res = cString(fmt.Sprintf("distfeat native library: internal error: %v", r))
	}
}

// errorJSON is a JSON document carrying only an error.
func errorJSON(err error) *C.char {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return cString(string(b))
}

//export distfeat_free
func distfeat_free(p *C.char) { C.free(unsafe.Pointer(p)) }

//export distfeat_version
func distfeat_version() *C.char { return cString(buildinfo.Version) }

// distfeat_new compiles a spec: from the JSON document specJSON, or (specJSON NULL) from the
// file specPath (relative two_sample references resolve against its directory), or the
// built-in default when both are NULL. It returns the JSON of compiled or {"error": …}.
//
//export distfeat_new
func distfeat_new(specJSON, specPath *C.char) (res *C.char) {
	defer guard(&res)
	var sp *spec.Spec
	var err error
	switch {
	case specJSON != nil:
		sp, err = spec.ParseSpec([]byte(C.GoString(specJSON)))
	case specPath != nil:
		sp, err = spec.LoadSpec(C.GoString(specPath))
	default:
		sp = spec.DefaultSpec()
	}
	if err != nil {
		return errorJSON(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		return errorJSON(err)
	}
	kinds := map[string]string{}
	for _, f := range sp.Families {
		kinds[f.Name] = f.Kind
	}
	c := compiled{Spec: sp.CanonicalJSON(), SpecID: sp.ID(), Dim: emb.Dim(), Width: offline.Width(emb)}
	for _, col := range emb.Columns() {
		c.Columns = append(c.Columns, column{Name: col.Name, Family: col.Family, Len: col.Len, Kind: kinds[col.Family]})
	}
	for _, m := range emb.PointMaps() {
		c.PointMaps = append(c.PointMaps, column{Name: m.Name(), Family: m.Name(), Len: m.Len(), Kind: spec.KindMarginal})
	}
	for _, d := range emb.DriftColumns() {
		c.Drift = append(c.Drift, driftColumn{Column: d.Column, Family: d.Family, Alpha: d.Alpha})
	}
	c.Handle = uintptr(cgo.NewHandle(emb))
	b, err := json.Marshal(c)
	if err != nil {
		cgo.Handle(c.Handle).Delete()
		return errorJSON(err)
	}
	return cString(string(b))
}

//export distfeat_close
func distfeat_close(h C.uintptr_t) {
	defer func() { _ = recover() }() // an unknown handle: nothing to release
	cgo.Handle(h).Delete()
}

// embedder returns the handle's embedder or an error for a released or foreign handle.
func embedder(h C.uintptr_t) (emb *embedding.Embedder, err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("invalid or closed spec handle")
		}
	}()
	emb, ok := cgo.Handle(h).Value().(*embedding.Embedder)
	if !ok {
		return nil, errors.New("invalid spec handle")
	}
	return emb, nil
}

// sets views the caller's buffers (never kept after the call).
func sets(points *C.double, values C.int64_t, offsets *C.int64_t, nsets C.int64_t, dim int) offline.Sets {
	s := offline.Sets{Dim: dim}
	if values > 0 {
		s.Points = unsafe.Slice((*float64)(unsafe.Pointer(points)), int(values))
	}
	s.Offsets = unsafe.Slice((*int64)(unsafe.Pointer(offsets)), int(nsets)+1)
	return s
}

// distfeat_embed writes the features of nsets sets (raw points: values float64s, set i from
// point offsets[i] to offsets[i+1]) into out (nsets × width float32s). NULL or an error.
//
//export distfeat_embed
func distfeat_embed(h C.uintptr_t, points *C.double, values C.int64_t, offsets *C.int64_t, nsets C.int64_t,
	out *C.float, outLen C.int64_t, workers C.int) (res *C.char) {
	defer guard(&res)
	emb, err := embedder(h)
	if err != nil {
		return cError(err)
	}
	o := unsafe.Slice((*float32)(unsafe.Pointer(out)), int(outLen))
	return cError(offline.Embed(emb, sets(points, values, offsets, nsets, emb.Dim()), o, int(workers)))
}

// distfeat_points writes the per-point features of the spec's marginal_transfer families
// (total points × point width float32s) for sets whose window features (as distfeat_embed
// wrote them) are windows.
//
//export distfeat_points
func distfeat_points(h C.uintptr_t, points *C.double, values C.int64_t, offsets *C.int64_t, nsets C.int64_t,
	windows *C.float, windowsLen C.int64_t, out *C.float, outLen C.int64_t, workers C.int) (res *C.char) {
	defer guard(&res)
	emb, err := embedder(h)
	if err != nil {
		return cError(err)
	}
	w := unsafe.Slice((*float32)(unsafe.Pointer(windows)), int(windowsLen))
	o := unsafe.Slice((*float32)(unsafe.Pointer(out)), int(outLen))
	return cError(offline.Points(emb, sets(points, values, offsets, nsets, emb.Dim()), w, o, int(workers)))
}

// calibrateRequest is distfeat_calibrate's JSON argument.
type calibrateRequest struct {
	Labels   []string        `json:"labels"`
	Base     json.RawMessage `json:"base"`
	Families []string        `json:"families"`
	MaxSets  int             `json:"max_sets"`
	Error    float64         `json:"error"`
	TargetR2 float64         `json:"target_r2"`
	Workers  int             `json:"workers"`
}

// distfeat_calibrate proposes a spec for nsets sets of dimension dim (calibrate.Calibrate);
// request is calibrateRequest's JSON. It returns {"spec": …, "spec_id": …, "notes": […],
// "checks": […]} or {"error": …}.
//
//export distfeat_calibrate
func distfeat_calibrate(points *C.double, values C.int64_t, offsets *C.int64_t, nsets C.int64_t, dim C.int, request *C.char) (res *C.char) {
	defer guard(&res)
	var req calibrateRequest
	if err := json.Unmarshal([]byte(C.GoString(request)), &req); err != nil {
		return errorJSON(fmt.Errorf("calibrate request: %w", err))
	}
	var base *spec.Spec
	if len(req.Base) > 0 && string(req.Base) != "null" {
		var err error
		if base, err = spec.ParseSpec(req.Base); err != nil {
			return errorJSON(fmt.Errorf("base spec: %w", err))
		}
	}
	opts := calibrate.Options{Families: req.Families, MaxSets: req.MaxSets, Error: req.Error, TargetR2: req.TargetR2, Workers: req.Workers}
	cal, err := offline.Calibrate(context.Background(), sets(points, values, offsets, nsets, int(dim)), req.Labels, base, opts)
	if err != nil {
		return errorJSON(err)
	}
	type note struct {
		Field string `json:"field"`
		Value string `json:"value"`
		Rule  string `json:"rule"`
	}
	notes := make([]note, len(cal.Notes))
	for i, n := range cal.Notes {
		notes[i] = note{n.Field, n.Value, n.Rule}
	}
	b, err := json.Marshal(map[string]any{"spec": json.RawMessage(cal.Spec.CanonicalJSON()), "spec_id": cal.Spec.ID(),
		"notes": notes, "checks": cal.Checks})
	if err != nil {
		return errorJSON(err)
	}
	return cString(string(b))
}

// distfeat_uniform writes n uniform draws in [0, 1) of the project's frozen generator
// (embedding.NewRNG(seed, stream).Float64) into out: the point sets of the golden test
// vectors (embedding/testdata/golden.json), so that other languages check the same bytes.
//
//export distfeat_uniform
func distfeat_uniform(seed C.uint64_t, stream *C.char, out *C.double, n C.int64_t) (res *C.char) {
	defer guard(&res)
	rng := embedding.NewRNG(uint64(seed), C.GoString(stream))
	for i, o := 0, unsafe.Slice((*float64)(unsafe.Pointer(out)), int(n)); i < len(o); i++ {
		o[i] = rng.Float64()
	}
	return nil
}

// distfeat_model_seal completes a model document an exporter wrote (model.Seal: strict
// decoding, validation, model_version from the content) and returns
// {"model_version": …, "file": the model file's text} or {"error": …}.
//
//export distfeat_model_seal
func distfeat_model_seal(doc *C.char) (res *C.char) {
	defer guard(&res)
	m, b, err := model.Seal([]byte(C.GoString(doc)))
	if err != nil {
		return errorJSON(err)
	}
	out, err := json.Marshal(map[string]string{"model_version": m.ModelVersion, "file": string(b)})
	if err != nil {
		return errorJSON(err)
	}
	return cString(string(out))
}

// distfeat_stream_new returns a handle to an empty offline.Stream of the spec h (one set fed in
// parts), released with distfeat_close; 0 for an invalid spec handle.
//
//export distfeat_stream_new
func distfeat_stream_new(h C.uintptr_t) C.uintptr_t {
	emb, err := embedder(h)
	if err != nil {
		return 0
	}
	return C.uintptr_t(cgo.NewHandle(offline.NewStream(emb)))
}

// stream returns the handle's stream or an error for a released or foreign handle.
func stream(h C.uintptr_t) (s *offline.Stream, err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("invalid or closed stream handle")
		}
	}()
	s, ok := cgo.Handle(h).Value().(*offline.Stream)
	if !ok {
		return nil, errors.New("invalid stream handle")
	}
	return s, nil
}

// distfeat_stream_add adds values raw float64s (whole points) to the stream. NULL or an error.
//
//export distfeat_stream_add
func distfeat_stream_add(h C.uintptr_t, points *C.double, values C.int64_t) (res *C.char) {
	defer guard(&res)
	s, err := stream(h)
	if err != nil {
		return cError(err)
	}
	var x []float64
	if values > 0 {
		x = unsafe.Slice((*float64)(unsafe.Pointer(points)), int(values))
	}
	return cError(s.Add(x))
}

// distfeat_stream_count is the number of points added (-1 for an invalid handle).
//
//export distfeat_stream_count
func distfeat_stream_count(h C.uintptr_t) C.int64_t {
	s, err := stream(h)
	if err != nil {
		return -1
	}
	return C.int64_t(s.Count())
}

// distfeat_stream_features writes the features of the points added so far (width float32s).
//
//export distfeat_stream_features
func distfeat_stream_features(h C.uintptr_t, out *C.float, outLen C.int64_t, workers C.int) (res *C.char) {
	defer guard(&res)
	s, err := stream(h)
	if err != nil {
		return cError(err)
	}
	return cError(s.Features(unsafe.Slice((*float32)(unsafe.Pointer(out)), int(outLen)), int(workers)))
}
