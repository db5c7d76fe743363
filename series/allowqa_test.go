package series

import (
	"strings"
	"testing"
)

// TestAllowMissingQA: the listed collections get a QA-optional copy of
// their profile (the caller's override first, else the built-in one); the
// others, the caller's map and the built-in profiles are left alone; a
// collection no profile reads is an error naming it.
func TestAllowMissingQA(t *testing.T) {
	t.Parallel()
	own := &Profile{Name: "mine"}
	overrides := map[string]*Profile{"my-cube": own}
	got, err := AllowMissingQA(overrides, []string{"my-cube", "modis-13Q1-061"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["my-cube"].QAOptional || got["my-cube"].Name != "mine" || !got["modis-13Q1-061"].QAOptional {
		t.Errorf("profiles %+v: want my-cube and modis-13Q1-061, both QA-optional", got)
	}
	if own.QAOptional || len(overrides) != 1 || Profiles()["modis-13Q1-061"].QAOptional {
		t.Error("the caller's profile, map or a built-in profile was changed")
	}
	if same, err := AllowMissingQA(overrides, nil); err != nil || len(same) != 1 || same["my-cube"] != own {
		t.Errorf("no collection: %v, %v; want the overrides as they were", same, err)
	}
	if _, err := AllowMissingQA(nil, []string{"no-such-cube"}); err == nil || !strings.Contains(err.Error(), "no-such-cube") {
		t.Errorf("unknown collection: %v, want an error naming it", err)
	}
}
