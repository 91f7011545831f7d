// Package schema holds distfeat's wire formats (docs/input-output.md): decoding of input point
// records (JSON and Arrow IPC stream), encoding of input records for producers and tests, and
// the Arrow schema, encoding and decoding of output feature records.
//
// Input decoding treats every record as hostile: it never panics, returns an *InvalidError
// carrying a dead-letter reason for every bad record, and bounds its memory use by a small
// multiple of the record's size (see DecodeRecord).
package schema
