package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
)

// ErrTopicMissing is returned by Run when a configured topic does not exist at start-up. A
// worker never creates topics (partition counts and retention are the operator's); without
// the check a missing output topic would hold every partition's output in retries.
var ErrTopicMissing = errors.New("does not exist")

// checkTopics verifies at start-up that the input, output and dead-letter topics exist. It
// retries while the brokers cannot be reached (they may start after the worker) and returns
// an error naming the topic and its variable when the cluster answers that one is missing.
// It returns nil without checking when ctx ends first.
func (w *Worker) checkTopics(ctx context.Context) error {
	vars := []struct{ env, topic string }{
		{"DISTFEAT_INPUT_TOPIC", w.cfg.InputTopic},
		{"DISTFEAT_OUTPUT_TOPIC", w.cfg.OutputTopic},
		{"DISTFEAT_DLQ_TOPIC", w.cfg.DLQTopic},
	}
	if w.cfg.PointsTopic != "" {
		vars = append(vars, struct{ env, topic string }{"DISTFEAT_POINT_FEATURES_TOPIC", w.cfg.PointsTopic})
	}
	if w.models != nil {
		vars = append(vars, struct{ env, topic string }{"DISTFEAT_PREDICTIONS_TOPIC", w.cfg.PredictionsTopic})
	}
	if w.cfg.ModelsTopic != "" {
		vars = append(vars, struct{ env, topic string }{"DISTFEAT_MODELS_TOPIC", w.cfg.ModelsTopic})
	}
	names := make([]string, len(vars))
	for i, v := range vars {
		names[i] = v.topic
	}
	bo := newBackoff(200*time.Millisecond, 10*time.Second)
	for {
		mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		md, err := w.client.Metadata(mctx, &kafka.MetadataRequest{Topics: names})
		cancel()
		if err == nil {
			found := map[string]error{}
			for _, t := range md.Topics {
				found[t.Name] = t.Error
			}
			for _, v := range vars {
				terr, ok := found[v.topic]
				if !ok || errors.Is(terr, kafka.UnknownTopicOrPartition) {
					// Kafka leaves a topic the principal may not describe out of the metadata
					// kafka-go's transport caches, so for a SASL user "missing" may be an ACL.
					acl := ""
					if w.cfg.User != "" {
						acl = fmt.Sprintf(", or grant principal User:%s describe on it", w.cfg.User)
					}
					return fmt.Errorf("consumer: %s: topic %q %w on %v (create it%s, or point the variable at an existing topic)", v.env, v.topic, ErrTopicMissing, w.cfg.Brokers, acl)
				}
				if terr != nil && err == nil {
					err = fmt.Errorf("topic %q: %w", v.topic, terr)
					if aerr := kafkaio.Authorization(terr, w.cfg.User, "describe", fmt.Sprintf("topic %q (%s)", v.topic, v.env)); aerr != nil {
						err = aerr
					}
				}
			}
			if err == nil {
				return nil
			}
		} else if err = w.classify(ctx, err, "describe", "the topics"); kafkaio.Fatal(err) {
			return fmt.Errorf("consumer: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		d := bo.next()
		w.log.Warn("cannot check the topics yet, retrying", "brokers", w.cfg.Brokers, "topics", names, "err", err, "retry_in", d)
		w.transport.CloseIdleConnections()
		if !sleep(ctx, d) {
			return nil
		}
	}
}

// checkFeatureSize refuses a spec whose feature records cannot fit the output limit: every
// window would stall its partition, so it is a configuration error at start-up.
func checkFeatureSize(emb *embedding.Embedder, out *schema.Output, limit int) error {
	n, err := processor.MaxFeatureBytes(emb, out)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	if n > limit {
		features := 0
		for _, c := range emb.Columns() {
			features += c.Len
		}
		return fmt.Errorf("consumer: feature records of spec %s (%d features) take up to %d bytes, over the output limit DISTFEAT_MAX_OUTPUT_BYTES=%d: reduce the spec's features, or raise DISTFEAT_MAX_OUTPUT_BYTES together with the broker's message.max.bytes",
			emb.Spec().ID(), features, n, limit)
	}
	return nil
}

// pointOutput is the per-point encoder of the worker (Config.PointsTopic): a column per
// marginal_transfer family of the spec. The spec must have one, the embedder must retain
// points, and one point's row must fit the output limit; the errors name the settings.
func pointOutput(cfg Config, emb *embedding.Embedder) (*schema.PointOutput, error) {
	maps := emb.PointMaps()
	if len(maps) == 0 {
		return nil, fmt.Errorf("consumer: DISTFEAT_POINT_FEATURES_TOPIC=%s needs a marginal_transfer family in DISTFEAT_SPEC (spec %s has none)", cfg.PointsTopic, emb.Spec().ID())
	}
	if !emb.RetainsPoints() {
		return nil, errors.New("consumer: per-point output needs an embedder built with embedding.WithPointRetention")
	}
	if cfg.PointsTopic == cfg.OutputTopic || cfg.PointsTopic == cfg.DLQTopic || cfg.PointsTopic == cfg.InputTopic {
		return nil, fmt.Errorf("consumer: DISTFEAT_POINT_FEATURES_TOPIC=%s must differ from the input, output and dead-letter topics", cfg.PointsTopic)
	}
	var cols []embedding.Column
	for _, m := range maps {
		cols = append(cols, embedding.Column{Name: m.Name(), Family: m.Name(), Len: m.Len()})
	}
	out := schema.NewPointOutput(emb.Spec(), cols)
	if _, err := processor.PointChunk(emb, out, cfg.MaxOutputBytes); err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	return out, nil
}
