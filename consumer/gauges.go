package consumer

import "sync"

// windowState is what the gauges read from a partition's processor.
type windowState interface {
	Open() int
	SizeBytes() int
}

// gauges aggregates per-partition window state into the process-wide gauges.
type gauges struct {
	mu    sync.Mutex
	open  map[int]int
	bytes map[int]int
}

func (g *gauges) set(partition int, s windowState, final bool) (open, bytes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open, g.bytes = map[int]int{}, map[int]int{}
	}
	if final || s == nil {
		delete(g.open, partition)
		delete(g.bytes, partition)
	} else {
		g.open[partition] = s.Open()
		g.bytes[partition] = s.SizeBytes()
	}
	for _, v := range g.open {
		open += v
	}
	for _, v := range g.bytes {
		bytes += v
	}
	return open, bytes
}
