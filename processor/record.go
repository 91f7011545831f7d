package processor

import "time"

// Header is one Kafka record header, without Kafka: the caller converts to and from its
// client's type.
type Header struct {
	Key   string
	Value []byte
}

// Record is one input record of the partition the Processor serves, as the caller's Kafka
// client delivered it.
type Record struct {
	Topic     string
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []Header
	// Time is the record timestamp: the event time of points whose value carries none.
	Time time.Time
}

// header returns the value of the first header named key, or "".
func (r *Record) header(key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Kind says where an output Message goes.
type Kind uint8

const (
	// Feature is a feature record for the output topic.
	Feature Kind = iota + 1
	// DeadLetter is a rejected input record for the dead-letter topic.
	DeadLetter
	// PointFeature is per-point features of a closed window (Config.Points) for the
	// per-point topic: they follow the window's feature record, in point order.
	PointFeature
	// Prediction is a closed window's prediction by the model in force (Config.Models) for
	// the predictions topic: it follows the window's feature record (and per-point records).
	Prediction
)

// String returns "feature", "dead-letter", "point-feature" or "prediction".
func (k Kind) String() string {
	switch k {
	case Feature:
		return "feature"
	case DeadLetter:
		return "dead-letter"
	case PointFeature:
		return "point-feature"
	case Prediction:
		return "prediction"
	}
	return "unknown"
}

// Message is one output record. The caller picks the topic by Kind and must write a
// partition's messages in the order the Processor returned them.
type Message struct {
	Kind    Kind
	Key     []byte
	Value   []byte
	Headers []Header
	// Time is the record timestamp: a window's end event time, or a dead letter's original
	// timestamp.
	Time time.Time
	// FirstOffset is the lowest input offset the message depends on: the offset of the
	// record holding a window's first point, or the dead-lettered record's offset.
	FirstOffset int64
	// EventEnd is a feature record's window end event time in ms (for emit latency); -1 for
	// a dead letter.
	EventEnd int64
}

// Result is what a Process or ExpireIdle call produced, in output order.
type Result struct {
	Messages []Message
}

// Values of the result label of Observer.OnRecord (distfeat_records_total{result}).
const (
	// ResultOK: every point of the record was added to windows.
	ResultOK = "ok"
	// ResultInvalid: the record was dead-lettered.
	ResultInvalid = "invalid"
	// ResultReplayed: the record lies below the restored replay position; its output was
	// delivered before the last commit and is suppressed.
	ResultReplayed = "replayed"
)
