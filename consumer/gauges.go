package consumer

import (
	"sync"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/window"
)

// gauges aggregates per-partition window state into the process-wide gauges.
type gauges struct {
	mu    sync.Mutex
	open  map[int]int
	bytes map[int]int
}

func (g *gauges) set(partition int, m *window.Manager[*embedding.Sketch], final bool) (open, bytes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open, g.bytes = map[int]int{}, map[int]int{}
	}
	if final || m == nil {
		delete(g.open, partition)
		delete(g.bytes, partition)
	} else {
		g.open[partition] = m.Open()
		g.bytes[partition] = m.SizeBytes()
	}
	for _, v := range g.open {
		open += v
	}
	for _, v := range g.bytes {
		bytes += v
	}
	return open, bytes
}
