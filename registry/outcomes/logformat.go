package outcomes

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/scorehub/scorehub/registry/process"
)

// Names in a FileStore's directory, which may be shared with other stores
// of the data directory: every name starts with "outcomes".
const (
	lockFileName  = "outcomes.lock"
	segmentPrefix = "outcomes-"
	segmentSuffix = ".log"
)

// segmentMagic starts every segment: it names the format and its
// version. A change that an older build would misread gets a new one.
const segmentMagic = "scorehub outcomes log 1\n"

const (
	// frameHeader is the length of a record's frame header: the length
	// of its payload and the payload's CRC-32C, both little-endian
	// uint32.
	frameHeader = 8
	// maxRecord bounds a record's payload, so that a damaged length
	// never makes a reader allocate more.
	maxRecord = 64 << 20
)

// The kinds of record, the first byte of a payload; the rest is the
// record's JSON. The birth flag of a prediction is its kind, so that
// Append encodes a batch before it decides which of its predictions
// start their rows.
const (
	kindPrediction = 'p' // a prediction of a row the store holds already
	kindBirth      = 'b' // a prediction that starts its row
	kindFeedback   = 'f' // the outcomes a feedback batch recorded
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func segmentName(first uint64) string {
	return fmt.Sprintf("%s%016x%s", segmentPrefix, first, segmentSuffix)
}

// parseSegmentName returns the sequence number of the first record of
// the segment named name, and whether name is a segment's.
func parseSegmentName(name string) (uint64, bool) {
	hex, ok := strings.CutPrefix(name, segmentPrefix)
	if !ok {
		return 0, false
	}
	hex, ok = strings.CutSuffix(hex, segmentSuffix)
	if !ok || len(hex) != 16 {
		return 0, false
	}
	first, err := strconv.ParseUint(hex, 16, 64)
	return first, err == nil
}

// appendFrame appends payload, framed, to buf.
func appendFrame(buf, payload []byte) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(payload, castagnoli))
	return append(buf, payload...)
}

// errTorn is what scan reports of a record that is not whole: a crash cut
// it short, or left garbage where it would have been.
var errTorn = errors.New("a record is cut short")

// scan reads the records of a segment of size bytes from r, after its
// header, and calls fn with each record's offset and payload, which fn
// must not keep. It stops at the end of the segment, with bad nil, or at
// the first record that is not whole and valid (its frame is cut short,
// its length is out of range, its checksum does not match, or fn refuses
// it), with bad saying what is wrong there. end is the offset it stopped
// at: the end of the last valid record. err is a failure to read.
func scan(r io.ReaderAt, size int64, fn func(off int64, payload []byte) error) (end int64, bad, err error) {
	off := int64(len(segmentMagic))
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 64<<10)
	var hdr [frameHeader]byte
	var payload []byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil, nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return off, errTorn, nil
			}
			return off, nil, err
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		if n == 0 || n > maxRecord {
			return off, fmt.Errorf("a record claims a length of %d bytes", n), nil
		}
		if int64(n) > size-off-frameHeader {
			return off, errTorn, nil
		}
		if cap(payload) < int(n) {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(br, payload); err != nil {
			return off, nil, err
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			return off, errors.New("a record's checksum does not match"), nil
		}
		if err := fn(off, payload); err != nil {
			return off, err, nil
		}
		off += frameHeader + int64(n)
	}
}

// readRecord reads the payload of the record at off, of n bytes, checking
// its frame.
func readRecord(r io.ReaderAt, off int64, n uint32) ([]byte, error) {
	b := make([]byte, frameHeader+int(n))
	if _, err := r.ReadAt(b, off); err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(b[:4]) != n || crc32.Checksum(b[frameHeader:], castagnoli) != binary.LittleEndian.Uint32(b[4:8]) {
		return nil, errors.New("the record is damaged")
	}
	return b[frameHeader:], nil
}

// predictionRecord is a prediction in the log: [Prediction] with numbers
// that JSON cannot hold (a regressor's missing answer is NaN) as text.
type predictionRecord struct {
	Endpoint    process.EndpointRef `json:"endpoint"`
	RowID       string              `json:"rowId"`
	Model       string              `json:"model"`
	Role        string              `json:"role,omitempty"`
	Label       string              `json:"label,omitempty"`
	Classes     []string            `json:"classes,omitempty"`
	Confidences []number            `json:"confidences,omitempty"`
	Value       number              `json:"value,omitempty"`
	At          time.Time           `json:"at"`
}

// feedbackRecord is the outcomes one feedback batch recorded: those that
// matched a row, in batch order. One batch is one record, so that a crash
// leaves all of it or none.
type feedbackRecord struct {
	Endpoint process.EndpointRef `json:"endpoint"`
	At       time.Time           `json:"at"`
	Outcomes []outcomeRecord     `json:"outcomes"`
	// Recorded is the sequence number of the record that first held
	// these outcomes, when they were carried on from it to this one.
	Recorded *uint64 `json:"recorded,omitempty"`
}

type outcomeRecord struct {
	RowID   string `json:"rowId"`
	IsLabel bool   `json:"isLabel,omitempty"`
	Label   string `json:"label,omitempty"`
	Value   number `json:"value,omitempty"`
}

// encodePrediction returns the payload of p's record, of kind
// kindPrediction; Append makes it a birth by changing its first byte.
func encodePrediction(p *Prediction) ([]byte, error) {
	at := p.At.UTC()
	if y := at.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("its time %v is outside the years 0 to 9999", p.At)
	}
	conf := make([]number, len(p.Confidences))
	for i, c := range p.Confidences {
		conf[i] = number(c)
	}
	return encode(kindPrediction, predictionRecord{Endpoint: p.Endpoint, RowID: p.RowID, Model: p.Model, Role: p.Role,
		Label: p.Label, Classes: p.Classes, Confidences: conf, Value: number(p.Value), At: at})
}

// encodeFeedback returns the payload of the record of outcomes fed back
// at; recorded is nil but for outcomes carried on from an earlier record.
func encodeFeedback(ref process.EndpointRef, outs []Outcome, at time.Time, recorded *uint64) ([]byte, error) {
	at = at.UTC()
	if y := at.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("its time %v is outside the years 0 to 9999", at)
	}
	rec := feedbackRecord{Endpoint: ref, At: at, Outcomes: make([]outcomeRecord, len(outs)), Recorded: recorded}
	for i, o := range outs {
		rec.Outcomes[i] = outcomeRecord{RowID: o.RowID, IsLabel: o.IsLabel, Label: o.Label, Value: number(o.Value)}
	}
	return encode(kindFeedback, rec)
}

func encode(kind byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append([]byte{kind}, b...), nil
}

func decodePrediction(payload []byte) (Prediction, error) {
	var r predictionRecord
	if err := json.Unmarshal(payload[1:], &r); err != nil {
		return Prediction{}, err
	}
	var conf []float64
	if len(r.Confidences) > 0 {
		conf = make([]float64, len(r.Confidences))
		for i, c := range r.Confidences {
			conf[i] = float64(c)
		}
	}
	var classes []string
	if len(r.Classes) > 0 {
		classes = r.Classes
	}
	return Prediction{Endpoint: r.Endpoint, RowID: r.RowID, Model: r.Model, Role: r.Role, Label: r.Label,
		Classes: classes, Confidences: conf, Value: float64(r.Value), At: r.At}, nil
}

// decodeFeedback decodes the record of outcomes, and the sequence number
// of the record that first held them when that was another.
func decodeFeedback(payload []byte) (process.EndpointRef, []Outcome, time.Time, *uint64, error) {
	var r feedbackRecord
	if err := json.Unmarshal(payload[1:], &r); err != nil {
		return process.EndpointRef{}, nil, time.Time{}, nil, err
	}
	outs := make([]Outcome, len(r.Outcomes))
	for i, o := range r.Outcomes {
		outs[i] = Outcome{RowID: o.RowID, IsLabel: o.IsLabel, Label: o.Label, Value: float64(o.Value)}
	}
	return r.Endpoint, outs, r.At, r.Recorded, nil
}

// number is a float64 in JSON that holds NaN and the infinities too, as
// the strings "NaN", "+Inf" and "-Inf".
type number float64

// MarshalJSON writes n in its shortest form, or as one of the strings.
func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*n = number(math.NaN())
		return nil
	case `"+Inf"`:
		*n = number(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = number(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*n = number(f)
	return nil
}
