package resp

import "bytes"

// RESP3 reply type bytes (HELLO 3), as they appear first on the wire.
const (
	// TypeNull is RESP3's one null (_), the reply to a read of a missing
	// key.
	TypeNull = '_'
	// TypeDouble is a floating-point number (,1.5, ,inf, ,nan).
	TypeDouble = ','
	// TypeBool is a boolean (#t or #f).
	TypeBool = '#'
	// TypeBigNumber is an integer of any size ((3492890328409238509324).
	TypeBigNumber = '('
	// TypeVerbatim is a bulk string whose payload starts with a
	// three-letter format and a colon (=15\r\ntxt:Some string).
	TypeVerbatim = '='
	// TypeBlobError is an error reply sent as a bulk string (!len).
	TypeBlobError = '!'
	// TypeMap is a map of n key-value pairs: 2n replies follow.
	TypeMap = '%'
	// TypeSet is an unordered collection of n replies.
	TypeSet = '~'
	// TypeAttribute is a map of n pairs annotating the reply that
	// follows it: 2n replies, then the annotated reply.
	TypeAttribute = '|'
	// TypePush is out-of-band data of n replies (a Pub/Sub message, a
	// tracking invalidation): not the reply to any request.
	TypePush = '>'
)

// Reply is one parsed reply. Data aliases the buffer it was parsed from.
type Reply struct {
	// Type is the type byte: TypeSimple, TypeError, TypeInt, TypeBulk,
	// TypeArray, or one of RESP3's (TypeNull…TypePush).
	Type byte
	// Data is the payload of a simple string, error, bulk string, blob
	// error, verbatim string (its format prefix included), double or big
	// number; nil for a null.
	Data []byte
	// Int is the value of an integer, 1 or 0 for a boolean, the element
	// count of an array, set or push, the pair count of a map or
	// attribute, and the length of a bulk string; -1 for a null.
	Int int64
}

// IsNull reports whether r is a null: RESP2's null bulk string or null
// array, or RESP3's null.
func (r Reply) IsNull() bool {
	return (r.Type == TypeBulk || r.Type == TypeArray) && r.Int < 0 || r.Type == TypeNull
}

// IsError reports whether r is an error reply: a simple error or a blob
// error.
func (r Reply) IsError() bool { return r.Type == TypeError || r.Type == TypeBlobError }

// Elements is the number of replies that follow r's header as its
// elements: an array's, set's or push's count, twice a map's or
// attribute's pair count; 0 for any other reply. An attribute is then
// followed by the reply it annotates.
func (r Reply) Elements() int64 {
	switch r.Type {
	case TypeArray, TypeSet, TypePush:
		return max(r.Int, 0)
	case TypeMap, TypeAttribute:
		return 2 * r.Int
	}
	return 0
}

// ParseReply parses the reply at the start of b, RESP2 or RESP3. It
// returns the number of bytes consumed, 0 when b holds only part of a
// reply. For an aggregate (array, map, set, attribute, push) only the
// header is consumed: its Elements follow and are parsed one by one.
// Bulk strings, verbatim strings and blob errors longer than maxBulk are
// a ProtocolError (maxBulk <= 0 means DefaultMaxBulkLen).
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
		return parseBlob(b, t, next, v)
	default:
		return parseReply3(b, t, line, next, maxBulk)
	}
}

// parseBlob parses the payload of v bytes at b[next:] of a blob of type
// t (bulk string, verbatim string, blob error).
func parseBlob(b []byte, t byte, next int, v int64) (Reply, int, error) {
	end := int64(next) + v + 2
	if end > int64(len(b)) {
		return Reply{}, 0, nil
	}
	e := int(end)
	if b[e-2] != '\r' || b[e-1] != '\n' {
		return Reply{}, 0, protoErr("bulk reply not terminated by CRLF")
	}
	return Reply{Type: t, Data: b[next : e-2 : e-2], Int: v}, e, nil
}

// parseReply3 is ParseReply for RESP3's types, out of the RESP2 path so
// that the replies of a RESP2 server cost no more for their existence.
func parseReply3(b []byte, t byte, line []byte, next int, maxBulk int64) (Reply, int, error) {
	switch t {
	case TypeNull:
		if len(line) != 0 {
			return Reply{}, 0, protoErr("invalid null reply %q", line)
		}
		return Reply{Type: t, Int: -1}, next, nil
	case TypeBool:
		if len(line) != 1 || line[0] != 't' && line[0] != 'f' {
			return Reply{}, 0, protoErr("invalid boolean reply %q", line)
		}
		v := int64(0)
		if line[0] == 't' {
			v = 1
		}
		return Reply{Type: t, Int: v}, next, nil
	case TypeDouble:
		if len(line) == 0 {
			return Reply{}, 0, protoErr("empty double reply")
		}
		return Reply{Type: t, Data: line}, next, nil
	case TypeBigNumber:
		digits := line
		if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
			digits = digits[1:]
		}
		if len(digits) == 0 || bytes.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return Reply{}, 0, protoErr("invalid big number reply %q", line)
		}
		return Reply{Type: t, Data: line}, next, nil
	case TypeVerbatim, TypeBlobError:
		if maxBulk <= 0 {
			maxBulk = DefaultMaxBulkLen
		}
		v, ok := parseInt(line)
		if !ok || v < 0 || v > maxBulk || t == TypeVerbatim && v < 4 {
			return Reply{}, 0, protoErr("invalid %s length %q", typeName(t), line)
		}
		r, n, err := parseBlob(b, t, next, v)
		if n > 0 && t == TypeVerbatim && r.Data[3] != ':' {
			return Reply{}, 0, protoErr("verbatim string %q without its format", r.Data[:4])
		}
		return r, n, err
	case TypeMap, TypeSet, TypeAttribute, TypePush:
		v, ok := parseInt(line)
		if !ok || v < 0 {
			return Reply{}, 0, protoErr("invalid %s length %q", typeName(t), line)
		}
		return Reply{Type: t, Int: v}, next, nil
	default:
		return Reply{}, 0, protoErr("unexpected reply type '%s'", printable(t))
	}
}

// typeName names a RESP3 type in errors.
func typeName(t byte) string {
	switch t {
	case TypeVerbatim:
		return "verbatim string"
	case TypeBlobError:
		return "blob error"
	case TypeMap:
		return "map"
	case TypeSet:
		return "set"
	case TypeAttribute:
		return "attribute"
	}
	return "push"
}

// VerbatimText is the text of a verbatim string's payload, without its
// format ("txt:"); any other payload is returned as it is.
func VerbatimText(r Reply) []byte {
	if r.Type == TypeVerbatim && len(r.Data) >= 4 {
		return r.Data[4:]
	}
	return r.Data
}

// SkipReply returns the length of the complete reply at the start of b,
// nested aggregates included, or 0 when b holds only part of it. An
// attribute is skipped with the reply it annotates; a push is one reply.
// Aggregates declaring more than MaxReplyElements elements in all are a
// ProtocolError.
func SkipReply(b []byte, maxBulk int64) (int, error) {
	pos, want := 0, int64(1)
	for want > 0 {
		r, n, err := ParseReply(b[pos:], maxBulk)
		if n == 0 || err != nil {
			return 0, err
		}
		pos += n
		want--
		if r.Type == TypeBulk || r.Type == TypeSimple {
			continue
		}
		e := r.Elements()
		if r.Type == TypeAttribute {
			e++
		}
		if e > 0 {
			if e > MaxReplyElements-want {
				return 0, protoErr("aggregate of %d elements", e)
			}
			want += e
		}
	}
	return pos, nil
}

// MaxReplyElements bounds the elements a reply's aggregates may declare in
// all: far beyond any reply, and no count can overflow.
const MaxReplyElements = 1 << 40
