package schema

// Kafka record header names (DESIGN §4), defined once here and used by the processor, the
// producer, the commands and the tests.
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
)
