package training

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

// DefaultHeldOut is the share of rows held out for scoring when Options.HeldOut is 0.
const DefaultHeldOut = 0.1

// splitSalt versions the split: changing how rows are assigned changes it.
const splitSalt = "dynabench/training.split/v1\x00"

// IsHeldOut reports whether the row with this key is on the held-out side of a split holding out
// ratio of the rows. It depends on nothing but the key and the ratio, so a row keeps its side when
// rows are added or removed, and every machine splits alike; a row held out at ratio r is held out at
// every larger ratio too.
func IsHeldOut(key string, ratio float64) bool {
	if ratio <= 0 {
		return false
	}
	sum := sha256.Sum256([]byte(splitSalt + key))
	u := float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53) // uniform in [0, 1)
	return u < math.Min(ratio, 1)
}

// Split divides rows into training and held-out rows by IsHeldOut, keeping their order.
func Split(rows []Example, ratio float64) (train, heldOut []Example) {
	for _, r := range rows {
		if IsHeldOut(r.Key, ratio) {
			heldOut = append(heldOut, r)
		} else {
			train = append(train, r)
		}
	}
	return train, heldOut
}
