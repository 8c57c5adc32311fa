package target

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/testutil"
)

// TestAttachYoungServer: a server that has SET and GET alone answers
// PING with an error reply, which shows it up: Start returns at once,
// its notes saying what it lacks and what to do instead; without
// AllowFlush it is refused, since its keys cannot be counted.
func TestAttachYoungServer(t *testing.T) {
	addr := testutil.StartYoungServer(t)
	for _, allow := range []bool{true, false} {
		a, err := NewAttach(AttachConfig{Name: "young", Addr: addr, AllowFlush: allow})
		if err != nil {
			t.Fatal(err)
		}
		inst, err := a.Start(context.Background(), Strategy{Name: "default"}, Env{})
		if !allow {
			if !errors.Is(err, ErrNotEmpty) {
				t.Errorf("without AllowFlush: %v, want ErrNotEmpty", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		info := inst.Info()
		want := []string{NoteNoInfo, NoteNoConfig, NoteNoKeyCount, NoteNoFlush}
		if !slices.Equal(info.Notes, want) || info.Flushed || info.Config != "" || info.Version != "" {
			t.Errorf("info %+v: want the notes %q, nothing flushed", info, want)
		}
		// Later attempts: the keys are counted no more, the flush is still
		// missing.
		inst, err = a.Start(context.Background(), Strategy{Name: "default"}, Env{})
		if err != nil || !slices.Equal(inst.Info().Notes, []string{NoteNoInfo, NoteNoConfig, NoteNoFlush}) {
			t.Errorf("second Start: %v, notes %q", err, inst.Info().Notes)
		}
		if _, err := SampleServer(context.Background(), info, ""); err != nil {
			t.Errorf("SampleServer of a server without INFO: %v", err)
		}
	}
}

// TestWaitPingLoading: a server that answers LOADING is not serving yet:
// no reply of that kind shows it ready.
func TestWaitPingLoading(t *testing.T) {
	addr := testutil.ServeBytes(t, "-LOADING Redis is loading the dataset in memory\r\n")
	a, err := NewAttach(AttachConfig{Name: "loading", Addr: addr, AllowFlush: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Start(context.Background(), Strategy{Name: "default"}, Env{ReadyTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrNotReady) {
		t.Errorf("Start: %v, want ErrNotReady", err)
	}
}
