package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Strict JSON reading of spec documents: every error is a *SpecError naming the field.

type keyValue struct {
	key string
	val json.RawMessage
}

// readObject splits a JSON object into its fields in document order, rejecting duplicates.
func readObject(raw json.RawMessage, field string) ([]keyValue, error) {
	if jsonType(raw) != "object" {
		return nil, &SpecError{Field: field, Msg: "must be a JSON object, got " + jsonType(raw)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, &SpecError{Field: field, Msg: err.Error()}
	}
	var out []keyValue
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &SpecError{Field: field, Msg: err.Error()}
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, &SpecError{Field: join(field, key), Msg: err.Error()}
		}
		if seen[key] {
			return nil, &SpecError{Field: join(field, key), Msg: "duplicate field"}
		}
		seen[key] = true
		out = append(out, keyValue{key, val})
	}
	return out, nil
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// jsonType names the JSON type of a raw value.
func jsonType(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func readInt(raw json.RawMessage, field string) (int, error) {
	lit := string(bytes.TrimSpace(raw))
	if jsonType(raw) != "number" {
		return 0, &SpecError{Field: field, Msg: "must be an integer, got " + jsonType(raw)}
	}
	if strings.ContainsAny(lit, ".eE") {
		return 0, &SpecError{Field: field, Msg: "must be an integer, got " + lit}
	}
	v, err := strconv.ParseInt(lit, 10, 64)
	if err != nil || v != int64(int(v)) {
		return 0, &SpecError{Field: field, Msg: "integer out of range: " + lit}
	}
	return int(v), nil
}

func readUint64(raw json.RawMessage, field string) (uint64, error) {
	lit := string(bytes.TrimSpace(raw))
	if jsonType(raw) != "number" || strings.ContainsAny(lit, ".eE-") {
		return 0, &SpecError{Field: field, Msg: "must be an integer in [0, 2^64), got " + lit}
	}
	v, err := strconv.ParseUint(lit, 10, 64)
	if err != nil {
		return 0, &SpecError{Field: field, Msg: "must be an integer in [0, 2^64), got " + lit}
	}
	return v, nil
}

func readFloat(raw json.RawMessage, field string) (float64, error) {
	if jsonType(raw) != "number" {
		return 0, &SpecError{Field: field, Msg: "must be a number, got " + jsonType(raw)}
	}
	lit := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, &SpecError{Field: field, Msg: "number out of range: " + lit}
	}
	return v, nil
}

func readString(raw json.RawMessage, field string) (string, error) {
	var v string
	if jsonType(raw) != "string" || json.Unmarshal(raw, &v) != nil {
		return "", &SpecError{Field: field, Msg: "must be a string, got " + jsonType(raw)}
	}
	return v, nil
}

func readBool(raw json.RawMessage, field string) (bool, error) {
	var v bool
	if jsonType(raw) != "boolean" || json.Unmarshal(raw, &v) != nil {
		return false, &SpecError{Field: field, Msg: "must be true or false, got " + jsonType(raw)}
	}
	return v, nil
}

func readFloats(raw json.RawMessage, field string) ([]float64, error) {
	if jsonType(raw) != "array" {
		return nil, &SpecError{Field: field, Msg: "must be an array of numbers, got " + jsonType(raw)}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, &SpecError{Field: field, Msg: err.Error()}
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		v, err := readFloat(e, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func readBounds(raw json.RawMessage) (Bounds, error) {
	var b Bounds
	fields, err := readObject(raw, "bounds")
	if err != nil {
		return b, err
	}
	has := map[string]bool{}
	for _, kv := range fields {
		has[kv.key] = true
		switch kv.key {
		case "lo":
			b.Lo, err = readFloats(kv.val, "bounds.lo")
		case "hi":
			b.Hi, err = readFloats(kv.val, "bounds.hi")
		default:
			err = &SpecError{Field: "bounds." + kv.key, Msg: "unknown field"}
		}
		if err != nil {
			return b, err
		}
	}
	for _, k := range []string{"lo", "hi"} {
		if !has[k] {
			return b, &SpecError{Field: "bounds." + k, Msg: "required"}
		}
	}
	return b, nil
}

// readValue reads raw into the Go value ref points to, by its type.
func readValue(ref any, raw json.RawMessage, field string) (err error) {
	switch p := ref.(type) {
	case *int:
		*p, err = readInt(raw, field)
	case *uint64:
		*p, err = readUint64(raw, field)
	case *float64:
		*p, err = readFloat(raw, field)
	case *string:
		*p, err = readString(raw, field)
	case *bool:
		*p, err = readBool(raw, field)
	case *Bounds:
		*p, err = readBounds(raw)
	default:
		panic(fmt.Sprintf("spec: spec field %s has unsupported type %T", field, ref))
	}
	return err
}

// jsonTypeName is the JSON type of the Go value ref points to, for the field reference.
func jsonTypeName(ref any) string {
	switch ref.(type) {
	case *int, *uint64:
		return "integer"
	case *float64:
		return "number"
	case *string:
		return "string"
	case *bool:
		return "boolean"
	case *Bounds:
		return "object"
	case *[]Family:
		return "array of objects"
	}
	panic(fmt.Sprintf("spec: unsupported spec field type %T", ref))
}

// valueOf dereferences a field reference.
func valueOf(ref any) any {
	switch p := ref.(type) {
	case *int:
		return *p
	case *uint64:
		return *p
	case *float64:
		return *p
	case *string:
		return *p
	case *bool:
		return *p
	}
	panic(fmt.Sprintf("spec: unsupported spec field type %T", ref))
}

// setValue stores v (of the referenced type) through ref.
func setValue(ref, v any) {
	switch p := ref.(type) {
	case *int:
		*p = v.(int)
	case *float64:
		*p = v.(float64)
	case *string:
		*p = v.(string)
	case *bool:
		*p = v.(bool)
	default:
		panic(fmt.Sprintf("spec: unsupported spec field type %T", ref))
	}
}

// canonicalValue is a field's value as CanonicalJSON writes it: non-finite floats (only
// possible in an invalid Spec built in Go) become null.
func canonicalValue(v any) any {
	if x, ok := v.(float64); ok {
		return finite(x)
	}
	return v
}

// finite maps a non-finite float to nil (JSON null).
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func finites(v []float64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = finite(x)
	}
	return out
}

// readFamilies decodes the families array; present[i] records family i's explicit fields.
func readFamilies(raw json.RawMessage) ([]Family, []map[string]bool, error) {
	if jsonType(raw) != "array" {
		return nil, nil, &SpecError{Field: "families", Msg: "must be an array of objects, got " + jsonType(raw)}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, nil, &SpecError{Field: "families", Msg: err.Error()}
	}
	fams := make([]Family, len(elems))
	present := make([]map[string]bool, len(elems))
	for i, e := range elems {
		p, err := readFamily(e, fmt.Sprintf("families[%d]", i), &fams[i])
		if err != nil {
			return nil, nil, err
		}
		present[i] = p
	}
	return fams, present, nil
}

// readFamily decodes one family object into f and returns the fields it sets. The kind
// decides which fields apply, so it is read first.
func readFamily(raw json.RawMessage, prefix string, f *Family) (map[string]bool, error) {
	fields, err := readObject(raw, prefix)
	if err != nil {
		return nil, err
	}
	kindField := findFamilyField("kind")
	for _, kv := range fields {
		if kv.key != "kind" {
			continue
		}
		if f.Kind, err = readString(kv.val, prefix+".kind"); err != nil {
			return nil, err
		}
		if msg := kindField.validate(f.Kind); msg != "" {
			return nil, &SpecError{Field: prefix + ".kind", Msg: msg}
		}
	}
	if f.Kind == "" {
		return nil, &SpecError{Field: prefix + ".kind", Msg: kindRequired()}
	}
	present := map[string]bool{}
	for _, kv := range fields {
		name := prefix + "." + kv.key
		ff := findFamilyField(kv.key)
		if ff == nil {
			return nil, &SpecError{Field: name, Msg: "unknown field"}
		}
		if _, ok := ff.use(f.Kind); !ok {
			return nil, &SpecError{Field: name, Msg: fmt.Sprintf("not a field of kind %q", f.Kind)}
		}
		present[kv.key] = true
		if kv.key == "kind" {
			continue
		}
		if err := readValue(ff.ref(f), kv.val, name); err != nil {
			return nil, err
		}
	}
	if !present["name"] {
		return nil, &SpecError{Field: prefix + ".name", Msg: "required"}
	}
	return present, nil
}
