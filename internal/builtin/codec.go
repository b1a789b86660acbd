package builtin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The saved models are a small binary format: a magic string, a version number, then uvarints,
// length-prefixed strings and little-endian float64s. Weights are written sparsely (only non-zero rows), in
// index order, so the same model always encodes to the same bytes.

var errCorrupt = errors.New("builtin: corrupt model data")

type encoder struct{ buf []byte }

func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) int(v int)        { e.uvarint(uint64(v)) }
func (e *encoder) f64(v float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
}

func (e *encoder) str(s string) {
	e.int(len(s))
	e.buf = append(e.buf, s...)
}

func (e *encoder) strs(ss []string) {
	e.int(len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

// decoder reads what encoder wrote. The first failure sticks in err and every later read returns zero, so
// callers check err once; no read can panic or allocate more than the input could hold.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.buf = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// int reads a non-negative integer no larger than limit.
func (d *decoder) int(limit int) int {
	v := d.uvarint()
	if v > uint64(limit) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) f64() float64 {
	if len(d.buf) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.buf))
	d.buf = d.buf[8:]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.fail()
		return 0
	}
	return v
}

func (d *decoder) str() string {
	v := d.uvarint()
	if v > uint64(len(d.buf)) {
		d.fail()
		return ""
	}
	n := int(v)
	s := string(d.buf[:n])
	d.buf = d.buf[n:]
	return s
}

func (d *decoder) strs() []string {
	n := d.int(len(d.buf))
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.str()
	}
	return ss
}

// header checks the magic string and version.
func (d *decoder) header(magic string, version uint64) {
	if len(d.buf) < len(magic) || string(d.buf[:len(magic)]) != magic {
		d.err = fmt.Errorf("builtin: not a %q model", magic)
		d.buf = nil
		return
	}
	d.buf = d.buf[len(magic):]
	if v := d.uvarint(); d.err == nil && v != version {
		d.err = fmt.Errorf("builtin: %s model version %d, want %d", magic, v, version)
	}
}

// done reports the sticky error, or trailing bytes as corruption.
func (d *decoder) done() error {
	if d.err == nil && len(d.buf) > 0 {
		return errCorrupt
	}
	return d.err
}

// writeRows writes the non-zero rows of a weight matrix with width columns.
func (e *encoder) writeRows(w []float64, width int) {
	var rows int
	for r := 0; r < len(w)/width; r++ {
		if !allZero(w[r*width : (r+1)*width]) {
			rows++
		}
	}
	e.int(rows)
	prev := -1
	for r := 0; r < len(w)/width; r++ {
		row := w[r*width : (r+1)*width]
		if allZero(row) {
			continue
		}
		e.int(r - prev) // delta from the previous row, at least 1
		prev = r
		for _, v := range row {
			e.f64(v)
		}
	}
}

// readRows reads what writeRows wrote into w, which has its final size.
func (d *decoder) readRows(w []float64, width int) {
	total := len(w) / width
	rows := d.int(total)
	prev := -1
	for range rows {
		r := prev + d.int(total)
		if d.err != nil || r <= prev || r >= total {
			d.fail()
			return
		}
		prev = r
		for c := range width {
			w[r*width+c] = d.f64()
		}
	}
}

func allZero(row []float64) bool {
	for _, v := range row {
		if v != 0 {
			return false
		}
	}
	return true
}
