package consumer

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/schema"
)

// Kinds of output failure (the reason label of distfeat_output_stalled).
const (
	// failRetriable: the broker or the network may accept the same write later (leader
	// election, not enough replicas, timeouts, connection errors).
	failRetriable = "retriable"
	// failPermanent: the write cannot succeed until an operator changes something (a record
	// over a size limit, a missing topic, missing authorisation, a record the broker rejects).
	failPermanent = "permanent"
)

// permanentRetry is how often a write that failed permanently is attempted again. Nothing is
// dropped: the batch waits, loudly (not ready, distfeat_output_stalled, an error log line),
// until the operator's fix (a topic created, an ACL granted, a topic's max.message.bytes
// raised) lets it through.
const permanentRetry = 30 * time.Second

// outputFailure is one classified failed write: the first failing message (preferring a
// permanent failure) and what to do about it.
type outputFailure struct {
	kind   string // failRetriable or failPermanent
	code   string // Kafka error name in snake case, or "network"/"other" (error label)
	topic  string // topic of msg, or of the batch
	msg    *kafka.Message
	err    error
	failed int // messages of the attempt that failed
}

// classifyWrite classifies a failed WriteMessages of msgs. It returns the messages that still
// need writing (kafka-go reports per-message errors; the others were acknowledged) with their
// emit-latency ends, and the failure to report.
func classifyWrite(err error, msgs []kafka.Message, ends []int64) ([]kafka.Message, []int64, []int64, outputFailure) {
	var werrs kafka.WriteErrors
	if errors.As(err, &werrs) && len(werrs) == len(msgs) {
		var retryMsgs []kafka.Message
		var retryEnds, ackedEnds []int64
		var f outputFailure
		for i, e := range werrs {
			if e == nil {
				ackedEnds = append(ackedEnds, ends[i])
				continue
			}
			retryMsgs = append(retryMsgs, msgs[i])
			retryEnds = append(retryEnds, ends[i])
			kind, code := classifyError(e)
			if f.err == nil || (kind == failPermanent && f.kind != failPermanent) {
				f = outputFailure{kind: kind, code: code, topic: msgs[i].Topic, msg: &retryMsgs[len(retryMsgs)-1], err: e}
			}
		}
		f.failed = len(retryMsgs)
		return retryMsgs, retryEnds, ackedEnds, f
	}
	kind, code := classifyError(err)
	f := outputFailure{kind: kind, code: code, topic: batchTopics(msgs), err: err, failed: len(msgs)}
	var tooLarge kafka.MessageTooLargeError
	if errors.As(err, &tooLarge) {
		// kafka-go refuses the whole batch before sending when one message exceeds BatchBytes.
		for i := range msgs {
			if msgs[i].Topic == tooLarge.Message.Topic && string(msgs[i].Key) == string(tooLarge.Message.Key) &&
				len(msgs[i].Value) == len(tooLarge.Message.Value) {
				f.msg, f.topic = &msgs[i], msgs[i].Topic
				break
			}
		}
	}
	return msgs, ends, nil, f
}

// classifyError says whether err may go away by itself and names it for the error label.
// Kafka's own retriable flag decides, except that an unknown topic or partition counts as
// permanent here: the topics were checked at start-up, so the topic was deleted or the
// worker pointed elsewhere, which needs an operator.
func classifyError(err error) (kind, code string) {
	var tooLarge kafka.MessageTooLargeError
	if errors.As(err, &tooLarge) {
		return failPermanent, snake(kafka.MessageSizeTooLarge.Title())
	}
	var kerr kafka.Error
	if errors.As(err, &kerr) {
		if kerr == kafka.UnknownTopicOrPartition || !kerr.Temporary() {
			return failPermanent, snake(kerr.Title())
		}
		return failRetriable, snake(kerr.Title())
	}
	var nerr net.Error
	if errors.As(err, &nerr) || isNetworkText(err) {
		return failRetriable, "network"
	}
	return failRetriable, "other"
}

// isNetworkText recognises the connection errors kafka-go returns without a net.Error.
func isNetworkText(err error) bool {
	s := err.Error()
	return strings.Contains(s, "EOF") || strings.Contains(s, "connection") || strings.Contains(s, "broken pipe")
}

// snake turns a Kafka error title ("Message Size Too Large") into a label value
// (message_size_too_large).
func snake(title string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(title)), " ", "_")
}

// batchTopics names the topics of msgs, sorted and joined with "+" (at most the output and
// dead-letter topics, so the label's cardinality stays bounded).
func batchTopics(msgs []kafka.Message) string {
	seen := map[string]bool{}
	var out []string
	for _, m := range msgs {
		if !seen[m.Topic] {
			seen[m.Topic] = true
			out = append(out, m.Topic)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "+")
}

// remedy is the operator's next step for a failure, naming what to change.
func (w *Worker) remedy(f outputFailure) string {
	switch f.code {
	case snake(kafka.MessageSizeTooLarge.Title()), snake(kafka.InvalidRecord.Title()), snake(kafka.RecordListTooLarge.Title()):
		if f.msg != nil && f.msg.Topic == w.cfg.OutputTopic {
			return fmt.Sprintf("feature record of set %q window-id %s is %d bytes: raise the broker's message.max.bytes (or the topic's max.message.bytes) and DISTFEAT_MAX_OUTPUT_BYTES (now %d), or reduce the spec's features (D); the partition waits until it fits",
				truncateLabel(string(f.msg.Key)), headerValue(*f.msg, schema.HeaderWindowID), len(f.msg.Value), w.cfg.MaxOutputBytes)
		}
		if f.msg != nil && w.cfg.PointsTopic != "" && f.msg.Topic == w.cfg.PointsTopic {
			return fmt.Sprintf("per-point record of set %q window-id %s is %d bytes: per-point records are cut to DISTFEAT_MAX_OUTPUT_BYTES (now %d); set it below the broker's message.max.bytes (or the topic's max.message.bytes)",
				truncateLabel(string(f.msg.Key)), headerValue(*f.msg, schema.HeaderWindowID), len(f.msg.Value), w.cfg.MaxOutputBytes)
		}
		if f.msg != nil {
			return fmt.Sprintf("dead letter of source offset %s is %d bytes: dead letters are cut to DISTFEAT_MAX_OUTPUT_BYTES (now %d); set it below the broker's message.max.bytes (or the topic's max.message.bytes)",
				headerValue(*f.msg, schema.HeaderSourceOffset), len(f.msg.Value), w.cfg.MaxOutputBytes)
		}
		return fmt.Sprintf("a record exceeds the output limit: set DISTFEAT_MAX_OUTPUT_BYTES (now %d) below the broker's message.max.bytes", w.cfg.MaxOutputBytes)
	case snake(kafka.UnknownTopicOrPartition.Title()):
		if w.cfg.PointsTopic != "" && f.topic == w.cfg.PointsTopic {
			return fmt.Sprintf("topic %q does not exist: create it (DISTFEAT_POINT_FEATURES_TOPIC=%s); nothing is lost meanwhile", f.topic, w.cfg.PointsTopic)
		}
		return fmt.Sprintf("topic %q does not exist: create it (DISTFEAT_OUTPUT_TOPIC=%s, DISTFEAT_DLQ_TOPIC=%s); nothing is lost meanwhile", f.topic, w.cfg.OutputTopic, w.cfg.DLQTopic)
	case snake(kafka.TopicAuthorizationFailed.Title()), snake(kafka.ClusterAuthorizationFailed.Title()), snake(kafka.SASLAuthenticationFailed.Title()):
		return fmt.Sprintf("principal User:%s may not write to topic %q: grant it Write (and Describe) on the topic; nothing is lost meanwhile", w.cfg.User, f.topic)
	}
	if f.kind == failPermanent {
		return "the broker refuses the write; the partition waits until it is accepted"
	}
	return "retrying; the partition resumes by itself when the broker accepts writes again"
}

func headerValue(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func truncateLabel(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// stalls tracks which partitions' output is failing; the worker is not ready while any is.
type stalls struct {
	mu sync.Mutex
	by map[int]string // partition → failure kind
}

func (s *stalls) set(partition int, kind string) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by == nil {
		s.by = map[int]string{}
	}
	old, ok := s.by[partition]
	s.by[partition] = kind
	return !ok || old != kind
}

func (s *stalls) clear(partition int) (was string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	was = s.by[partition]
	delete(s.by, partition)
	return was
}

// describe returns "" when no partition's output fails, else a short reason.
func (s *stalls) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.by) == 0 {
		return ""
	}
	ids := make([]int, 0, len(s.by))
	for p := range s.by {
		ids = append(ids, p)
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, p := range ids {
		parts[i] = fmt.Sprintf("%d (%s)", p, s.by[p])
	}
	return "output failing on partition(s) " + strings.Join(parts, ", ")
}
