package resp

import "bytes"

// Reply is one parsed reply. Data aliases the buffer it was parsed from.
type Reply struct {
	// Type is TypeSimple, TypeError, TypeInt, TypeBulk or TypeArray.
	Type byte
	// Data is the payload of a simple string, error or bulk string; nil for
	// a null bulk string.
	Data []byte
	// Int is the value of an integer, the element count of an array, and
	// the length of a bulk string; -1 for a null bulk string or array.
	Int int64
}

// IsNull reports whether r is a null bulk string or null array.
func (r Reply) IsNull() bool {
	return (r.Type == TypeBulk || r.Type == TypeArray) && r.Int < 0
}

// ParseReply parses the reply at the start of b. It returns the number of
// bytes consumed, 0 when b holds only part of a reply. For an array only the
// header is consumed: its Int elements follow and are parsed one by one.
// Bulk strings longer than maxBulk are a ProtocolError (maxBulk <= 0 means
// DefaultMaxBulkLen).
func ParseReply(b []byte, maxBulk int64) (Reply, int, error) {
	if len(b) == 0 {
		return Reply{}, 0, nil
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > DefaultMaxInlineLen {
			return Reply{}, 0, protoErr("reply line too long")
		}
		return Reply{}, 0, nil
	}
	if nl < 2 || b[nl-1] != '\r' {
		return Reply{}, 0, protoErr("reply line not terminated by CRLF")
	}
	line := b[1 : nl-1]
	next := nl + 1
	switch t := b[0]; t {
	case TypeSimple, TypeError:
		return Reply{Type: t, Data: line}, next, nil
	case TypeInt:
		v, ok := parseInt(line)
		if !ok {
			return Reply{}, 0, protoErr("invalid integer reply %q", line)
		}
		return Reply{Type: t, Int: v}, next, nil
	case TypeArray:
		v, ok := parseInt(line)
		if !ok || v < -1 {
			return Reply{}, 0, protoErr("invalid array length %q", line)
		}
		return Reply{Type: t, Int: v}, next, nil
	case TypeBulk:
		if maxBulk <= 0 {
			maxBulk = DefaultMaxBulkLen
		}
		v, ok := parseInt(line)
		if !ok || v < -1 || v > maxBulk {
			return Reply{}, 0, protoErr("invalid bulk length %q", line)
		}
		if v < 0 {
			return Reply{Type: t, Int: -1}, next, nil
		}
		end := int64(next) + v + 2
		if end > int64(len(b)) {
			return Reply{}, 0, nil
		}
		e := int(end)
		if b[e-2] != '\r' || b[e-1] != '\n' {
			return Reply{}, 0, protoErr("bulk reply not terminated by CRLF")
		}
		return Reply{Type: t, Data: b[next : e-2 : e-2], Int: v}, e, nil
	default:
		return Reply{}, 0, protoErr("unexpected reply type '%s'", printable(t))
	}
}

// SkipReply returns the length of the complete reply at the start of b,
// nested arrays included, or 0 when b holds only part of it. An array
// declaring more than MaxReplyElements elements is a ProtocolError.
func SkipReply(b []byte, maxBulk int64) (int, error) {
	pos, want := 0, int64(1)
	for want > 0 {
		r, n, err := ParseReply(b[pos:], maxBulk)
		if n == 0 || err != nil {
			return 0, err
		}
		pos += n
		want--
		if r.Type == TypeArray && r.Int > 0 {
			if r.Int > MaxReplyElements-want {
				return 0, protoErr("array of %d elements", r.Int)
			}
			want += r.Int
		}
	}
	return pos, nil
}

// MaxReplyElements bounds the elements a reply's arrays may declare in
// all: far beyond any reply, and no count can overflow.
const MaxReplyElements = 1 << 40
