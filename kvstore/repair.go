package kvstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/pkg/resp"
)

// ErrRepairCancelled is returned by Repair when the confirmation is refused.
var ErrRepairCancelled = errors.New("repair cancelled: nothing was changed")

// Repair checks the log in dir and, if a record is damaged, offers to cut
// the log there: the damaged file is truncated at the last valid record
// and the files after it are dropped from the manifest and removed, since
// their records follow a gap. confirm is asked first, with a description of
// exactly what will be lost; a report goes to w.
func Repair(dir string, lim resp.Limits, confirm func(question string) bool, w io.Writer) error {
	man, ok, err := readManifest(dir)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no operation log in %s (no %s)", dir, manifestName)
	}
	names := man.files()
	for i, name := range names {
		path := filepath.Join(dir, name)
		records, err := scanFile(path, lim.WithDefaults(), nil)
		if err == nil {
			continue
		}
		var le *LogError
		if !errors.As(err, &le) {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		dataEnd, err := fileDataEnd(path)
		if err != nil {
			return err
		}
		cut, later := le.ValidEnd(), names[i+1:]
		var q strings.Builder
		fmt.Fprintf(&q, "%s is damaged at offset %d: %s.\n", path, le.Offset, le.Msg)
		fmt.Fprintf(&q, "Its first %d records are valid. Repair cuts the file at offset %d, where they end, dropping %s",
			records, cut, dropped(st.Size()-cut, le.Padding+st.Size()-dataEnd))
		if len(later) > 0 {
			var laterSize int64
			for _, n := range later {
				if sz, err := fileDataEnd(filepath.Join(dir, n)); err == nil {
					laterSize += sz
				}
			}
			fmt.Fprintf(&q, ",\nand removes the %d later log files (%s; %d bytes), whose records follow the damage",
				len(later), strings.Join(later, ", "), laterSize)
		}
		q.WriteString(".\nProceed?")
		if !confirm(q.String()) {
			return ErrRepairCancelled
		}
		if err := cutLogFile(path, cut, records); err != nil {
			return err
		}
		if len(later) > 0 {
			kept := manifest{base: man.base}
			if i > 0 || man.base == 0 {
				kept.incrs = man.incrs[:i+1-min(man.base, 1)]
			}
			if len(kept.incrs) == 0 {
				// The base was damaged: start a fresh incremental file.
				seq := man.lastIncr() + 1
				f, err := os.OpenFile(filepath.Join(dir, incrName(seq)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return err
				}
				f.Close()
				kept.incrs = []int{seq}
			}
			if err := writeManifest(dir, kept); err != nil {
				return err
			}
			for _, n := range later {
				os.Remove(filepath.Join(dir, n))
			}
		}
		fmt.Fprintf(w, "repaired: %s cut at offset %d, its %d valid records kept", path, cut, records)
		if len(later) > 0 {
			fmt.Fprintf(w, "; removed %s", strings.Join(later, ", "))
		}
		fmt.Fprintln(w)
		return nil
	}
	fmt.Fprintf(w, "the log in %s is intact (%s): nothing to repair\n", dir, strings.Join(names, ", "))
	return nil
}

// dropped says how many bytes a cut drops, and how many of them are the
// zeros filled ahead of the records (no data): after a crash an always
// log is as long as its preallocated space, and a damage found in those
// zeros drops mostly zeros.
func dropped(n, zeros int64) string {
	switch {
	case zeros == 0:
		return fmt.Sprintf("%d bytes", n)
	case zeros == n:
		return fmt.Sprintf("%d bytes, all of them zeros filled ahead of the records (preallocated space, no data)", n)
	}
	return fmt.Sprintf("%d bytes: %d of them zeros filled ahead of the records (preallocated space, no data), %d from the damage on",
		n, zeros, n-zeros)
}

// cutLogFile cuts the file at off. A compact base cut after its first
// entries blocks is closed with a trailer that counts them.
func cutLogFile(path string, off, entries int64) error {
	compact, err := isCompactBase(path)
	if err != nil {
		return err
	}
	if err := os.Truncate(path, off); err != nil {
		return err
	}
	if !compact {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(baseTrailer(uint64(entries))); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
