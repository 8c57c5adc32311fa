package results

import "strconv"

// Opt is an optional figure of the detail CSV: zero means not measured,
// and is written as an empty cell rather than a 0 that would read as a
// measurement. Its cells read as float64 columns do (an empty cell is 0).
type Opt float64

// MarshalCSV writes the figure as the other float columns are written, or
// an empty cell when it is zero.
func (o Opt) MarshalCSV() (string, error) {
	if o == 0 {
		return "", nil
	}
	return strconv.FormatFloat(float64(o), 'f', -1, 64), nil
}

// OptInt is an optional count of the detail CSV: zero means not measured
// and is written as an empty cell.
type OptInt int64

// MarshalCSV writes the count, or an empty cell when it is zero.
func (o OptInt) MarshalCSV() (string, error) {
	if o == 0 {
		return "", nil
	}
	return strconv.FormatInt(int64(o), 10), nil
}
