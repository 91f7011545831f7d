package processor

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
)

// maxSetBytes is the longest set ID the decoder accepts (schema.DecodeOptions' default),
// so the longest key a feature record can carry.
const maxSetBytes = 256

// MaxFeatureBytes is the size, as an output limit counts it (key, value and headers with
// Kafka's per-record overhead), of the largest feature record emb's spec can produce: a
// window of the longest set ID with the largest window-id. Feature vectors have a fixed
// length per spec, so this bound is exact up to the set ID's length; a caller checks it
// against its output limit at start-up, where a spec whose records can never be written is
// a configuration error rather than a partition that stalls on its first window.
func MaxFeatureBytes(emb *embedding.Embedder, out *schema.Output) (int, error) {
	cols := emb.Columns()
	vecs := make([][]float32, len(cols))
	for i, c := range cols {
		vecs[i] = make([]float32, c.Len)
	}
	set := strings.Repeat("s", maxSetBytes)
	rec := schema.FeatureRecord{Set: set, WindowStart: math.MinInt64, WindowEnd: math.MaxInt64,
		Seq: math.MaxUint64, N: math.MaxInt64, SpecID: emb.Spec().ID(), Vectors: vecs}
	value, err := out.Encode(rec)
	if err != nil {
		return 0, fmt.Errorf("processor: encode a feature record: %w", err)
	}
	headers := []Header{
		{Key: schema.HeaderContentType, Value: []byte(schema.ContentTypeArrow)},
		{Key: schema.HeaderSpecID, Value: []byte(emb.Spec().ID())},
		{Key: schema.HeaderWindowID, Value: []byte(strconv.FormatUint(math.MaxUint64, 10))},
		{Key: schema.HeaderRejectedRecords, Value: []byte(strconv.FormatInt(math.MaxInt64, 10))},
		{Key: schema.HeaderRejectedPoints, Value: []byte(strconv.FormatInt(math.MaxInt64, 10))},
	}
	return messageSize([]byte(set), value, headers), nil
}
