package kvstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/pkg/resp"
)

// ErrRepairCancelled is returned by Repair when the confirmation is refused.
var ErrRepairCancelled = errors.New("repair cancelled: nothing was changed")

// Repair checks the log in dir and, if a record is damaged, offers to cut
// the log there: the damaged file is truncated at the last valid record
// and the files after it are dropped from the manifest and removed, since
// their records follow a gap. A missing manifest is rebuilt from the files
// found, and a missing incremental file is dropped from the manifest with
// the files after it. confirm is asked first, each time, with a
// description of exactly what will be lost; a report goes to w.
func Repair(dir string, lim resp.Limits, confirm func(question string) bool, w io.Writer) error {
	fsys := osFS{}
	man, ok, err := readManifest(dir)
	if err != nil {
		return err
	}
	if !ok {
		if man, err = rebuildManifest(dir, confirm, w); err != nil {
			return err
		}
	}
	if err := missingFiles(dir, man); err != nil {
		if man, err = dropMissing(dir, man, confirm, w); err != nil {
			return err
		}
	}
	names := man.files()
	for i, name := range names {
		path := filepath.Join(dir, name)
		synced := man.syncedOf(name)
		records, err := checkFile(path, lim.WithDefaults(), synced, nil)
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
		if len(later) > 0 || synced > cut {
			kept := manifest{base: man.base}
			if i > 0 || man.base == 0 {
				kept.incrs = man.incrs[:i+1-min(man.base, 1)]
			}
			if len(kept.incrs) == 0 {
				// The base was damaged: start a fresh incremental file.
				seq, err := freshIncr(dir, man)
				if err != nil {
					return err
				}
				kept.incrs = []int{seq}
			}
			for _, seq := range kept.incrs {
				kept = kept.withSynced(seq, man.synced[seq])
			}
			if name != baseName(man.base) && synced > cut {
				kept = kept.withSynced(kept.lastIncr(), cut)
			}
			if err := writeManifest(fsys, dir, kept); err != nil {
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

// freshIncr creates an empty incremental file numbered after every file
// of man and returns its number.
func freshIncr(dir string, man manifest) (int, error) {
	seq := max(man.base, man.lastIncr()) + 1
	f, err := openNewLogFile(osFS{}, filepath.Join(dir, incrName(seq)))
	if err != nil {
		return 0, err
	}
	return seq, f.Close()
}

// rebuildManifest writes a manifest for the log files found in dir, after
// asking: the newest base and the incremental files numbered from it on,
// as a rewrite leaves them (a rewrite numbers its new incremental file and
// then its base after every file before; it removes the older files only
// once the manifest names the base). The older files are left in place.
func rebuildManifest(dir string, confirm func(string) bool, w io.Writer) (manifest, error) {
	found, err := logFilesIn(dir)
	if err != nil {
		return manifest{}, err
	}
	if len(found) == 0 {
		return manifest{}, fmt.Errorf("no operation log in %s (no %s, no log files)", dir, manifestName)
	}
	var m manifest
	for _, f := range found {
		if f.base {
			m.base = f.seq
		}
	}
	var named, ignored []string
	for _, f := range found {
		switch {
		case f.base && f.seq == m.base:
			named = append(named, f.name)
		case !f.base && f.seq >= m.base:
			m.incrs = append(m.incrs, f.seq)
			named = append(named, f.name)
		default:
			ignored = append(ignored, f.name)
		}
	}
	var q strings.Builder
	fmt.Fprintf(&q, "%s is missing. Repair writes one naming %s", filepath.Join(dir, manifestName), strings.Join(named, ", "))
	if len(m.incrs) == 0 {
		fmt.Fprintf(&q, " and a new, empty incremental file")
	}
	if len(ignored) > 0 {
		fmt.Fprintf(&q, ";\nthe older files %s are what a rewrite replaced: it leaves them where they are, unnamed", strings.Join(ignored, ", "))
	}
	q.WriteString(".\nProceed?")
	if !confirm(q.String()) {
		return manifest{}, ErrRepairCancelled
	}
	if len(m.incrs) == 0 {
		seq, err := freshIncr(dir, manifest{base: m.base, incrs: []int{found[len(found)-1].seq}})
		if err != nil {
			return manifest{}, err
		}
		m.incrs = []int{seq}
	}
	if err := writeManifest(osFS{}, dir, m); err != nil {
		return manifest{}, err
	}
	fmt.Fprintf(w, "repaired: wrote %s naming %s\n", manifestName, strings.Join(m.files(), ", "))
	return m, nil
}

// dropMissing drops from man, after asking, the first incremental file
// that is missing and every file after it; a missing base cannot be
// repaired: the incremental files hold only the changes since it.
func dropMissing(dir string, man manifest, confirm func(string) bool, w io.Writer) (manifest, error) {
	names := man.files()
	first := slices.IndexFunc(names, func(n string) bool {
		_, err := os.Stat(filepath.Join(dir, n))
		return errors.Is(err, fs.ErrNotExist)
	})
	if man.base > 0 && first == 0 {
		return manifest{}, fmt.Errorf("%s is missing: the incremental files hold only the changes since it, so the log cannot be repaired; restore it from a backup", filepath.Join(dir, names[0]))
	}
	dropped := names[first:]
	kept := manifest{base: man.base, incrs: man.incrs[:first-min(man.base, 1)]}
	q := fmt.Sprintf("%s is missing. Repair drops %s from the manifest (the records after the gap cannot be replayed)", filepath.Join(dir, names[first]), strings.Join(dropped, ", "))
	if len(kept.incrs) == 0 {
		q += " and names a new, empty incremental file"
	}
	if !confirm(q + ".\nProceed?") {
		return manifest{}, ErrRepairCancelled
	}
	if len(kept.incrs) == 0 {
		seq, err := freshIncr(dir, man)
		if err != nil {
			return manifest{}, err
		}
		kept.incrs = []int{seq}
	}
	for _, seq := range kept.incrs {
		kept = kept.withSynced(seq, man.synced[seq])
	}
	if err := writeManifest(osFS{}, dir, kept); err != nil {
		return manifest{}, err
	}
	for _, n := range dropped {
		os.Remove(filepath.Join(dir, n)) // the missing one is gone already
	}
	fmt.Fprintf(w, "repaired: dropped %s from the manifest\n", strings.Join(dropped, ", "))
	return kept, nil
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
