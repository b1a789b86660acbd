package release

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Split names.
const (
	Train = "train"
	Dev   = "dev"
	Test  = "test"
)

// Splits lists the split names in file order.
var Splits = []string{Train, Dev, Test}

// Ratios are the shares of train, dev and test; each in [0, 1], summing to 1 (±1e-9).
type Ratios struct {
	Train float64 `json:"train"`
	Dev   float64 `json:"dev"`
	Test  float64 `json:"test"`
}

// DefaultRatios are used when a task sets none: 80/10/10.
var DefaultRatios = Ratios{Train: 0.8, Dev: 0.1, Test: 0.1}

// Validate returns a *FieldError naming the first bad ratio.
func (r Ratios) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"ratios.train", r.Train}, {"ratios.dev", r.Dev}, {"ratios.test", r.Test}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return invalid(f.name, "must be between 0 and 1, is %v", f.v)
		}
	}
	if sum := r.Train + r.Dev + r.Test; math.Abs(sum-1) > 1e-9 {
		return invalid("ratios", "train + dev + test must be 1, is %s", strconv.FormatFloat(sum, 'g', 6, 64))
	}
	return nil
}

// Split assigns an example to Train, Dev or Test.
//
// The hash: u = the top 53 bits of the first 8 bytes (big-endian) of HMAC-SHA256(key, "split\x00" +
// exampleID), divided by 2^53: a uniform number in [0, 1), exact in a float64. The example is train if u < r.Train, dev if u < r.Train + r.Dev, test
// otherwise. It depends on nothing but the id, the key and the ratios, so adding examples never moves
// existing ones, and a rebuilt release is identical. The key (see DeriveKey) keeps annotators from
// predicting which of their examples land in the test split.
func Split(exampleID string, key []byte, r Ratios) (string, error) {
	if err := r.Validate(); err != nil {
		return "", err
	}
	if exampleID == "" {
		return "", invalid("example id", "is empty")
	}
	return splitOf(exampleID, key, r), nil
}

// splitOf is Split for ratios already validated.
func splitOf(id string, key []byte, r Ratios) string {
	u := float64(binary.BigEndian.Uint64(mac(key, "split", id))>>11) / (1 << 53)
	switch {
	case u < r.Train:
		return Train
	case u < r.Train+r.Dev:
		return Dev
	}
	return Test
}
