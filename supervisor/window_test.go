package supervisor

import (
	"testing"
	"time"
)

func TestWindowSlides(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := Window{Max: 2, Period: time.Second}
	for i, tc := range []struct {
		at     time.Duration
		n      int
		within bool
	}{
		{0, 1, true},
		{100 * time.Millisecond, 2, true},
		{200 * time.Millisecond, 3, false}, // a third within the second
		{1100 * time.Millisecond, 2, true}, // the first two slid out; 200 ms and this remain
		{1200 * time.Millisecond, 2, true}, // 200 ms is exactly a Period old: out
		{1250 * time.Millisecond, 3, false},
	} {
		n, within := w.Add(t0.Add(tc.at))
		if n != tc.n || within != tc.within {
			t.Errorf("#%d Add(+%v) = %d, %v; want %d, %v", i, tc.at, n, within, tc.n, tc.within)
		}
	}
	if n := w.Count(t0.Add(10 * time.Second)); n != 0 {
		t.Errorf("Count long after = %d, want 0", n)
	}
	w.Add(t0.Add(11 * time.Second))
	w.Reset()
	if n := w.Count(t0.Add(11 * time.Second)); n != 0 {
		t.Errorf("Count after Reset = %d, want 0", n)
	}
}

func TestWindowNegativeMaxAllowsNone(t *testing.T) {
	w := Window{Max: -1, Period: time.Second}
	if n, within := w.Add(time.Unix(0, 0)); n != 1 || within {
		t.Errorf("Add = %d, %v; want 1, false", n, within)
	}
}

func TestBackoffDoubles(t *testing.T) {
	b := Backoff{Initial: 250 * time.Millisecond, Max: 30 * time.Second}
	want := []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}
	for n, w := range want {
		if d := b.Delay(n); d != w {
			t.Errorf("Delay(%d) = %v, want %v", n, d, w)
		}
	}
	if d := b.Delay(100); d != 30*time.Second {
		t.Errorf("Delay(100) = %v, want the cap 30s", d)
	}
	if d := (Backoff{Initial: time.Second, Max: time.Millisecond}).Delay(3); d != time.Second {
		t.Errorf("a Max below Initial: Delay = %v, want Initial", d)
	}
	if d := (Backoff{}).Delay(5); d != 0 {
		t.Errorf("zero Backoff: Delay = %v, want 0", d)
	}
}
