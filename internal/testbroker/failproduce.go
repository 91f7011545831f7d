package testbroker

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FailProduce makes the embedded broker answer every produce request to topic with the
// Kafka error code while blocked is true (fault tests: an output outage, a permanent
// refusal). It returns the number of requests it failed. The control is dropped at the first
// produce request after blocked turns false.
func (b *Broker) FailProduce(topic string, blocked *atomic.Bool, code int16) *atomic.Int64 {
	var failed atomic.Int64
	c := b.Cluster()
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if !blocked.Load() {
			c.DropControl()
			return nil, nil, false
		}
		pr := req.(*kmsg.ProduceRequest)
		hit := false
		for _, tp := range pr.Topics {
			hit = hit || tp.Topic == topic
		}
		if !hit {
			return nil, nil, false
		}
		c.KeepControl()
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, tp := range pr.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic, rt.TopicID = tp.Topic, tp.TopicID
			for _, p := range tp.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.BaseOffset = p.Partition, code, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		failed.Add(1)
		return resp, nil, true
	})
	return &failed
}
