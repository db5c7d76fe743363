package storage

import "testing"

func TestParseNetStats(t *testing.T) {
	raw := `{"methods":{"GET":{"count":3,"downloaded_bytes":300}},"handlers":{"vsis3":{"files":{
	"/vsis3/b/a.tif":{"methods":{"GET":{"count":2,"downloaded_bytes":250},"HEAD":{"count":1}}},
	"/vsis3/b/c.tif":{"methods":{"GET":{"count":1,"downloaded_bytes":50}}}},
	"actions":{"ReadDir":{"methods":{"GET":{"count":1,"downloaded_bytes":7}}}}}}}`
	got := parseNetStats([]byte(raw))
	if len(got) != 2 || got["/vsis3/b/a.tif"] != (NetStat{3, 250}) || got["/vsis3/b/c.tif"] != (NetStat{1, 50}) {
		t.Errorf("parseNetStats = %v", got)
	}
	if len(parseNetStats([]byte("not json"))) != 0 {
		t.Error("bad JSON gave stats")
	}
}
