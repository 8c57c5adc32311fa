package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// checkHistogramHeader reads the geometry in an encoded histogram's
// header without decoding the rest, and refuses one wider than the
// measurements' (HistMax at HistDigits): hdrhistogram-go checks that a
// header is consistent, not that it is small, and allocates the counts
// it describes.
func checkHistogramHeader(s string) error {
	// The outer header (cookie, compressed length) and the first bytes of
	// the zlib stream are enough.
	n := min(len(s), 4096)
	n -= n % 4
	raw, err := base64.StdEncoding.DecodeString(s[:n])
	if err != nil {
		if _, full := base64.StdEncoding.DecodeString(s); full != nil {
			return full
		}
		return err
	}
	if len(raw) < 8 {
		return fmt.Errorf("encoded histogram too short: %d bytes", len(raw))
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		return err
	}
	var h struct {
		Cookie, PayloadLength, NormalizingOffset, Digits int32
		Lowest, Highest                                  int64
	}
	if err := binary.Read(io.LimitReader(z, 32), binary.BigEndian, &h); err != nil {
		if strings.Contains(err.Error(), "EOF") {
			return fmt.Errorf("histogram header truncated")
		}
		return err
	}
	if h.Digits < 1 || h.Digits > HistDigits || h.Lowest < 1 || h.Highest > HistMax || h.Highest < 2*h.Lowest {
		return fmt.Errorf("histogram of %d to %d at %d digits: want at most %d to %d at %d",
			h.Lowest, h.Highest, h.Digits, HistMin, HistMax, HistDigits)
	}
	return nil
}
