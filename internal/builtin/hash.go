package builtin

// FNV-1a (64-bit) over bytes, written out so hashing a feature never allocates.
const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

// fnv is a running FNV-1a hash.
type fnv uint64

func newFNV() fnv { return fnv(fnvOffset) }

func (h fnv) byte(b byte) fnv { return (h ^ fnv(b)) * fnv(fnvPrime) }

func (h fnv) str(s string) fnv {
	for i := 0; i < len(s); i++ {
		h = (h ^ fnv(s[i])) * fnv(fnvPrime)
	}
	return h
}

// hashString is the FNV-1a hash of s.
func hashString(s string) uint64 { return uint64(newFNV().str(s)) }

// mix combines already-hashed parts into one feature key. It is a splitmix64-style finaliser: cheaper than
// feeding eight bytes per part through FNV, and the span model computes thousands of keys per question.
func mix(parts ...uint64) uint64 {
	h := fnvOffset
	for _, p := range parts {
		h ^= p + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}
