package schema

// Kafka record header names (docs/input-output.md), defined once here and used by the processor,
// the producer, the commands and the tests.
const (
	// HeaderContentType names a value's format: ContentTypeJSON or ContentTypeArrow on input
	// records (none means JSON), ContentTypeArrow on every feature record.
	HeaderContentType = "content-type"
	// HeaderSpecID carries the spec_id of a feature record, so a consumer can route or
	// reject records of another spec without decoding the value.
	HeaderSpecID = "spec-id"
	// HeaderWindowID carries a feature record's replay-stable window number (its seq, in
	// decimal): (key, window-id) identifies a window, and duplicates are byte-identical.
	HeaderWindowID = "window-id"
	// HeaderRejectedRecords is on a feature record whose window is partial: the number
	// (decimal) of its set's input records dead-lettered while the window was open (late
	// records excepted). Absent when none was.
	HeaderRejectedRecords = "rejected-records"
	// HeaderRejectedPoints goes with HeaderRejectedRecords when the points (decimal) of every
	// one of those records could be counted: absent when one did not decode far enough (not
	// valid JSON or Arrow, a non-finite coordinate in JSON, a wrong dimension, too large).
	HeaderRejectedPoints = "rejected-points"

	// HeaderError is a dead letter's reason (one of the Reason* constants).
	HeaderError = "error"
	// HeaderErrorDetail is a dead letter's human-readable explanation, bounded in length.
	HeaderErrorDetail = "error-detail"
	// HeaderSourceTopic is the topic of the record a dead letter stands for.
	HeaderSourceTopic = "source-topic"
	// HeaderSourcePartition is the partition (decimal) of the record a dead letter stands for.
	HeaderSourcePartition = "source-partition"
	// HeaderSourceOffset is the offset (decimal) of the record a dead letter stands for:
	// with the topic and partition it locates the original.
	HeaderSourceOffset = "source-offset"

	// HeaderValueTruncated is "true" on a dead letter whose value was cut to fit the output
	// message limit: the value is then a prefix of the original (possibly empty).
	HeaderValueTruncated = "value-truncated"
	// HeaderValueBytes is the original value's length (decimal) on a truncated dead letter.
	HeaderValueBytes = "value-bytes"
	// HeaderKeyTruncated is "true" on a dead letter whose key was cut to fit the output
	// message limit (only for keys of hundreds of kilobytes).
	HeaderKeyTruncated = "key-truncated"
	// HeaderHeadersDropped is the number (decimal) of original headers left off a dead
	// letter because they alone would not fit the output message limit.
	HeaderHeadersDropped = "headers-dropped"
)

// Control records: a worker appends them to its own input partition to make a
// processing-time decision durable (an idle timeout closing a set's windows). They carry the
// set's key, an empty value and these headers; the processor applies them at their position
// and never treats them as points or dead letters. Other consumers of the input topic should
// skip records with a HeaderControl header.
const (
	// HeaderControl marks a control record; its value says what it does (ControlClose).
	HeaderControl = "distfeat-control"
	// ControlClose is HeaderControl's value on an idle-close marker.
	ControlClose = "close"
	// HeaderCloseAfter is the input offset (decimal) the worker had read when it decided the
	// set was idle: the marker closes the set's windows only if no points arrived after it.
	HeaderCloseAfter = "distfeat-close-after"
	// HeaderCloseSeq is the window-id (decimal) of the set's earliest open window when the
	// marker was written (informational: logs and operators).
	HeaderCloseSeq = "distfeat-close-seq"
	// HeaderCloseGroup is the consumer group of the worker that wrote the marker: workers of
	// other groups reading the same topic ignore it (their windows are their own).
	HeaderCloseGroup = "distfeat-close-group"
)
