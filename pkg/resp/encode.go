package resp

import "strconv"

// Reply type bytes, as they appear first on the wire.
const (
	TypeSimple = '+'
	TypeError  = '-'
	TypeInt    = ':'
	TypeBulk   = '$'
	TypeArray  = '*'
)

var (
	crlf      = []byte("\r\n")
	nullBulk  = []byte("$-1\r\n")
	nullArray = []byte("*-1\r\n")
	okReply   = []byte("+OK\r\n")
)

// AppendSimple appends a simple string reply (+s). s must not contain CR or LF.
func AppendSimple(dst []byte, s string) []byte {
	dst = append(dst, TypeSimple)
	dst = append(dst, s...)
	return append(dst, crlf...)
}

// AppendOK appends +OK.
func AppendOK(dst []byte) []byte { return append(dst, okReply...) }

// AppendError appends an error reply (-msg). The first word of msg is the
// error code by convention (ERR, WRONGTYPE, NOAUTH...). CR and LF in msg are
// replaced by spaces so that a message can never break the framing.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, TypeError)
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, crlf...)
}

// AppendInt appends an integer reply (:n).
func AppendInt(dst []byte, n int64) []byte {
	dst = append(dst, TypeInt)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, crlf...)
}

// AppendBulk appends a bulk string reply ($len b).
func AppendBulk(dst, b []byte) []byte {
	dst = append(dst, TypeBulk)
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, crlf...)
	dst = append(dst, b...)
	return append(dst, crlf...)
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = append(dst, TypeBulk)
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, crlf...)
	dst = append(dst, s...)
	return append(dst, crlf...)
}

// AppendNull appends the RESP2 null bulk string ($-1), the reply to a read
// of a missing key.
func AppendNull(dst []byte) []byte { return append(dst, nullBulk...) }

// AppendNullArray appends the RESP2 null array (*-1).
func AppendNullArray(dst []byte) []byte { return append(dst, nullArray...) }

// AppendArray appends an array header for n elements; the caller appends the
// elements.
func AppendArray(dst []byte, n int) []byte {
	dst = append(dst, TypeArray)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, crlf...)
}

// AppendCommand appends a request: an array of bulk strings, the form every
// RESP server accepts.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = AppendArray(dst, len(args))
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// AppendCommandString is AppendCommand for string arguments.
func AppendCommandString(dst []byte, args ...string) []byte {
	dst = AppendArray(dst, len(args))
	for _, a := range args {
		dst = AppendBulkString(dst, a)
	}
	return dst
}
