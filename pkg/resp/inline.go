package resp

import (
	"fmt"
	"strings"
)

var errUnbalanced = protoErr("unbalanced quotes in request")

// SplitInline splits an inline request line into arguments with Redis's
// quoting rules (sdssplitargs), appending them to argv. Arguments are
// unescaped in place, so they alias line and line is modified: "double
// quotes" take the escapes \n \r \t \b \a \\ \" and \xHH, 'single quotes'
// take only \'; a closing quote must be followed by a space or the end of
// the line. Unbalanced quotes are a ProtocolError.
func SplitInline(argv [][]byte, line []byte) ([][]byte, error) {
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return argv, nil
		}
		// w is where the next unescaped byte of this argument goes; it never
		// passes p because unescaping only shrinks the text.
		start, w := p, p
		inDouble, inSingle := false, false
	token:
		for {
			if p == len(line) {
				if inDouble || inSingle {
					return argv, errUnbalanced
				}
				break
			}
			c := line[p]
			switch {
			case inDouble:
				switch {
				case c == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
					c = unhex(line[p+2])<<4 | unhex(line[p+3])
					p += 3
				case c == '\\' && p+1 < len(line):
					p++
					switch line[p] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = line[p]
					}
				case c == '"':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return argv, errUnbalanced
					}
					p++
					break token
				}
			case inSingle:
				switch {
				case c == '\\' && p+1 < len(line) && line[p+1] == '\'':
					p++
					c = '\''
				case c == '\'':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return argv, errUnbalanced
					}
					p++
					break token
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t':
					break token
				case '"':
					inDouble = true
					p++
					continue
				case '\'':
					inSingle = true
					p++
					continue
				}
			}
			line[w] = c
			w++
			p++
		}
		argv = append(argv, line[start:w:w])
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// QuoteInline joins args as an inline request that SplitInline splits
// back into them: an argument that is empty or holds a space, a quote, a
// backslash or a byte outside printable ASCII goes in double quotes, with
// the quotes and backslashes escaped and the other bytes as \xHH.
func QuoteInline(args []string) string {
	var b strings.Builder
	for i, arg := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		plain := arg != ""
		for j := 0; j < len(arg) && plain; j++ {
			plain = arg[j] > ' ' && arg[j] < 0x7f && arg[j] != '"' && arg[j] != '\'' && arg[j] != '\\'
		}
		if plain {
			b.WriteString(arg)
			continue
		}
		b.WriteByte('"')
		for j := 0; j < len(arg); j++ {
			switch ch := arg[j]; {
			case ch == '"' || ch == '\\':
				b.WriteByte('\\')
				b.WriteByte(ch)
			case ch >= ' ' && ch < 0x7f:
				b.WriteByte(ch)
			default:
				fmt.Fprintf(&b, "\\x%02x", ch)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}
