package fault

import "testing"

func TestFindTool(t *testing.T) {
	for _, tc := range []struct {
		names       []string
		want, found string
	}{
		{[]string{"echo", "a__echo"}, "echo", "echo"},
		{[]string{"ref__echo", "ref__sleep"}, "echo", "ref__echo"},
		// The prefix with the most of the three, so one backend's are called.
		{[]string{"a__echo", "b__echo", "b__sleep", "b__panic"}, "echo", "b__echo"},
		{[]string{"b__echo", "a__echo"}, "echo", "a__echo"},
		{[]string{"a__echo", "b__sleep", "b__panic"}, "echo", "a__echo"},
		{[]string{"__echo", "echoes", "x__echo_"}, "echo", ""},
		{nil, "panic", ""},
	} {
		if got := findTool(tc.names, tc.want); got != tc.found {
			t.Errorf("findTool(%q, %q) = %q, want %q", tc.names, tc.want, got, tc.found)
		}
	}
}
